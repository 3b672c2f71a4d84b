// Package wake is the one-to-many wake-up both SQL stores use to tell this process's change
// feed subscribers that a commit happened, so a subscriber waits on a channel instead of
// polling.
package wake

import "sync"

// Signal wakes every waiter at once: Wait returns a channel that the next Broadcast closes.
// The zero value is ready to use and it is safe for concurrent use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// Wait returns a channel closed by the next Broadcast. Arm it before reading what the
// broadcast announces, so a broadcast between the read and the wait is not missed.
func (s *Signal) Wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Broadcast wakes everyone waiting now; later waiters wait for the next one.
func (s *Signal) Broadcast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
