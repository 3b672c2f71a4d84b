package merge

import (
	"bytes"
	"fmt"
)

// Pick is how one conflict hunk is resolved.
type Pick int

const (
	// PickNone leaves the hunk unresolved; it renders with conflict markers.
	PickNone Pick = iota
	// PickOurs takes our side of the hunk.
	PickOurs
	// PickTheirs takes their side of the hunk.
	PickTheirs
	// PickBase takes the base version, dropping both sides' changes.
	PickBase
	// PickBoth takes ours, then theirs, without the base.
	PickBoth
	// PickEdited takes text the person wrote for the hunk.
	PickEdited
)

// String returns the pick's name for logs and UIs.
func (p Pick) String() string {
	switch p {
	case PickNone:
		return "none"
	case PickOurs:
		return "ours"
	case PickTheirs:
		return "theirs"
	case PickBase:
		return "base"
	case PickBoth:
		return "both"
	case PickEdited:
		return "edited"
	}
	return fmt.Sprintf("Pick(%d)", int(p))
}

// Choice is the resolution of one hunk: a Pick and, for PickEdited, the text.
type Choice struct {
	Pick Pick
	// Edited is the replacement text for PickEdited, used as is: it should
	// end with a newline unless the hunk is at the end of the file.
	Edited []byte
}

// Resolution records per-hunk choices over a Result, with undo, for a merge
// UI. Hunks are numbered 0..Conflicts-1 in file order. It is not safe for
// concurrent use.
type Resolution struct {
	result  Result
	hunks   []int // index in result.Chunks of each conflict
	choices []Choice
	undo    [][]undoEntry // one step may change several hunks
}

type undoEntry struct {
	hunk int
	prev Choice
}

// NewResolution starts resolving r with every hunk unresolved.
func NewResolution(r Result) *Resolution {
	s := &Resolution{result: r}
	for i, c := range r.Chunks {
		if c.Kind == Conflict {
			s.hunks = append(s.hunks, i)
		}
	}
	s.choices = make([]Choice, len(s.hunks))
	return s
}

// Result returns the merge being resolved.
func (s *Resolution) Result() Result { return s.result }

// Hunks returns the number of conflict hunks.
func (s *Resolution) Hunks() int { return len(s.hunks) }

// Hunk returns conflict hunk i.
func (s *Resolution) Hunk(i int) (Chunk, error) {
	if err := s.check(i); err != nil {
		return Chunk{}, err
	}
	return s.result.Chunks[s.hunks[i]], nil
}

// Choice returns how hunk i is resolved so far.
func (s *Resolution) Choice(i int) (Choice, error) {
	if err := s.check(i); err != nil {
		return Choice{}, err
	}
	return s.choices[i], nil
}

func (s *Resolution) check(i int) error {
	if i < 0 || i >= len(s.hunks) {
		return fmt.Errorf("merge: hunk %d out of range (have %d)", i, len(s.hunks))
	}
	return nil
}

// Pick resolves hunk i with p; PickEdited needs Edit instead.
func (s *Resolution) Pick(i int, p Pick) error {
	if err := s.check(i); err != nil {
		return err
	}
	if p < PickNone || p > PickEdited || p == PickEdited {
		return fmt.Errorf("merge: pick hunk %d: %v is not a side (use Edit for edited text)", i, p)
	}
	s.set([]int{i}, Choice{Pick: p})
	return nil
}

// Edit resolves hunk i with text the person wrote; text is copied.
func (s *Resolution) Edit(i int, text []byte) error {
	if err := s.check(i); err != nil {
		return err
	}
	s.set([]int{i}, Choice{Pick: PickEdited, Edited: bytes.Clone(text)})
	return nil
}

// PickRemaining resolves every still unresolved hunk with p ("take all
// remaining from ours") as one undo step, and returns how many it resolved.
func (s *Resolution) PickRemaining(p Pick) (int, error) {
	if p <= PickNone || p >= PickEdited {
		return 0, fmt.Errorf("merge: pick remaining: %v is not a side", p)
	}
	var idx []int
	for i, c := range s.choices {
		if c.Pick == PickNone {
			idx = append(idx, i)
		}
	}
	if len(idx) > 0 {
		s.set(idx, Choice{Pick: p})
	}
	return len(idx), nil
}

func (s *Resolution) set(idx []int, c Choice) {
	step := make([]undoEntry, len(idx))
	for k, i := range idx {
		step[k] = undoEntry{hunk: i, prev: s.choices[i]}
		s.choices[i] = c
	}
	s.undo = append(s.undo, step)
}

// Undo reverts the last Pick, Edit or PickRemaining; it reports false when
// there is nothing to undo.
func (s *Resolution) Undo() bool {
	if len(s.undo) == 0 {
		return false
	}
	step := s.undo[len(s.undo)-1]
	s.undo = s.undo[:len(s.undo)-1]
	for k := len(step) - 1; k >= 0; k-- {
		s.choices[step[k].hunk] = step[k].prev
	}
	return true
}

// Remaining returns how many hunks are still unresolved.
func (s *Resolution) Remaining() int {
	n := 0
	for _, c := range s.choices {
		if c.Pick == PickNone {
			n++
		}
	}
	return n
}

// Done reports whether every hunk is resolved.
func (s *Resolution) Done() bool { return s.Remaining() == 0 }

// Bytes returns the merged text with every choice applied; unresolved hunks
// are rendered with conflict markers as Render would.
func (s *Resolution) Bytes(opts RenderOptions) []byte {
	opts = opts.withDefaults()
	var buf bytes.Buffer
	buf.Grow(s.result.sizeHint())
	h := 0
	for _, c := range s.result.Chunks {
		if c.Kind != Conflict {
			writeLines(&buf, c.Lines, false, false)
			continue
		}
		ch := s.choices[h]
		h++
		switch ch.Pick {
		case PickNone:
			s.result.writeConflict(&buf, c, opts)
		case PickOurs:
			writeLines(&buf, c.Ours, false, false)
		case PickTheirs:
			writeLines(&buf, c.Theirs, false, false)
		case PickBase:
			writeLines(&buf, c.Base, false, false)
		case PickBoth:
			// Ours gets a newline if it lacks one, or its last line would
			// run into theirs' first (git's --union does the same).
			writeLines(&buf, c.Ours, true, s.result.needsCR(c))
			writeLines(&buf, c.Theirs, false, false)
		case PickEdited:
			buf.Write(ch.Edited)
		}
	}
	return buf.Bytes()
}
