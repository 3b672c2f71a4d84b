package sample

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Document is one sample document. Parent is the index of its parent in the same slice
// (always an earlier one), or -1 for a document at the root.
type Document struct {
	Title  string
	Body   string
	Tags   []string // sorted, no duplicates
	Parent int
}

// handbook is a small team handbook, three levels deep, parents before children.
var handbook = []Document{
	{Title: "Team handbook", Parent: -1, Tags: []string{"handbook"}, Body: `This handbook is how we work together. It is short on purpose: if something here is
wrong or out of date, change it. Every page has a history, so nothing you change is lost,
and two people editing the same page at the same time will see each other's changes
instead of overwriting them.

The pages below are grouped by the questions new colleagues ask most in their first
weeks: how to get started, how we plan and review work, how on-call works, and which
tools we use.`},
	{Title: "Getting started", Parent: 0, Tags: []string{"onboarding"}, Body: `Your first week is for reading, asking and shipping one small change. Nobody expects you
to know the codebase; everybody expects you to ask when you are stuck for more than
half an hour.

Your buddy is your first stop for questions. They will pair with you on your first
change and review it with you.`},
	{Title: "First day checklist", Parent: 1, Tags: []string{"checklist", "onboarding"}, Body: `Before lunch: collect your laptop, set a password on it, turn on disk encryption and
join the team chat. After lunch: clone the main repository, run the tests, and read
the architecture page.

If any step takes longer than ten minutes, write down where it got stuck. The next
person will thank you, and so will the page's history.`},
	{Title: "Accounts and access", Parent: 1, Tags: []string{"onboarding", "security"}, Body: `Access is granted per role, not per person. Ask your lead to add you to the right
group; never share an account or a token, not even for five minutes.

Production access comes after your first on-call shadow week. Until then, everything
you need runs on your own machine.`},
	{Title: "Your buddy", Parent: 1, Tags: []string{"onboarding"}, Body: `Every newcomer gets a buddy for the first two months: a colleague from another part of
the team who knows where things are and who to ask. Meet once a week, even when there
is nothing pressing; the good questions come up in the second half of those meetings.`},
	{Title: "How we work", Parent: 0, Tags: []string{"process"}, Body: `We plan in two-week cycles, keep changes small, and review everything. A change is done
when it is merged, deployed and someone other than its author has seen it working.`},
	{Title: "Planning", Parent: 5, Tags: []string{"planning", "process"}, Body: `On the first Monday of a cycle we pick what matters most and leave room for the
unexpected: about a third of the cycle stays unplanned, because it always fills up.

Anyone may propose work. Write a short note on the problem, not the solution, and bring
it to planning; the discussion is where the solution comes from.`},
	{Title: "Code review", Parent: 5, Tags: []string{"process", "review"}, Body: `Review within one working day. Read the description first, then the tests, then the
code. Ask questions rather than give orders, and say clearly which comments block the
merge and which are suggestions.

Authors: keep changes under four hundred lines where you can. A small change gets a
careful review; a large one gets a skim.`},
	{Title: "Writing decisions down", Parent: 5, Tags: []string{"decisions", "process"}, Body: `Decisions that are hard to undo get a page: the context, the options we considered,
what we chose and why. A decision record is never edited after the fact; a later
decision that replaces it links back to it.`},
	{Title: "On call", Parent: 0, Tags: []string{"oncall"}, Body: `One person is on call each week, from Monday ten o'clock to the next Monday ten
o'clock, with a second person as backup. On call means reachable within fifteen minutes
and able to open a laptop, not sitting at the desk all night.`},
	{Title: "Rota and handover", Parent: 9, Tags: []string{"oncall", "rota"}, Body: `The rota is planned a quarter ahead. Swaps are fine; update the rota yourself and tell
the backup. At handover the outgoing person writes three lines: what happened, what is
still open, and what to watch.`},
	{Title: "When the pager goes off", Parent: 9, Tags: []string{"incidents", "oncall"}, Body: `Acknowledge first, so the backup is not woken too. Then stop the bleeding: roll back,
switch off the feature, scale up. Finding the cause can wait until the users are fine.

Open an incident channel for anything that takes longer than thirty minutes, and post
short updates there even when there is nothing new: silence worries people more than
bad news.`},
	{Title: "Tools", Parent: 0, Tags: []string{"tools"}, Body: `We prefer few tools that everyone knows well to many tools that each person knows
partly. Before adding one, write down which problem it solves and which tool it
replaces.`},
	{Title: "The editor for shared records", Parent: 12, Tags: []string{"tandem", "tools"}, Body: `Product data and this handbook live in tandem. Open it with "tandem", pick a record and
edit. If a colleague saved the same record while you were typing, tandem shows what
they changed and lets you reload, retry or merge field by field.

Take a lease (press e) only when you need a record for a long edit; everybody else then
sees it read-only until you are done.`},
	{Title: "Chat etiquette", Parent: 12, Tags: []string{"communication", "tools"}, Body: `Ask in the team channel rather than in private messages, so the answer helps the next
person too. Say what you tried. Use threads for long discussions, and a call when a
thread passes twenty messages.`},
}

// notes are sentences for documents beyond the handbook, when more are asked for.
var notes = []string{
	"We agreed to try the new release checklist for one cycle and to review it at the retrospective.",
	"The search index was rebuilt overnight; queries are back to their usual speed.",
	"Stock counts in the warehouse system and the catalogue matched after the Friday sync.",
	"Two people edited the returns policy at once; the merge kept both changes.",
	"Next quarter's on-call rota is published; swaps go through the rota page.",
	"The supplier confirmed the new lamp shades ship in the second week of the month.",
	"Customer questions about delivery times doubled after the newsletter went out.",
	"We moved the design review to Thursday mornings so the whole team can join.",
	"The staging database was restored from last night's backup in twelve minutes.",
	"Photos for the autumn catalogue are in; thumbnails are generated by the worker.",
}

// Documents returns n sample documents: the team handbook (15 documents, three levels deep)
// first, then, when more are asked for, dated meeting notes under the handbook's first page.
// start offsets the notes' dates and sentences so a second batch differs.
func Documents(n, start int) []Document {
	out := make([]Document, 0, n)
	for i := 0; i < n && i < len(handbook); i++ {
		d := handbook[i]
		d.Tags = slices.Clone(d.Tags)
		out = append(out, d)
	}
	r := rand.New(rand.NewPCG(0x51ab, uint64(start)))
	for i := len(handbook); i < n; i++ {
		k := start + i - len(handbook)
		var body strings.Builder
		for j := 0; j < 2+r.IntN(3); j++ {
			if j > 0 {
				body.WriteString("\n\n")
			}
			body.WriteString(notes[r.IntN(len(notes))])
		}
		out = append(out, Document{
			Title:  fmt.Sprintf("Meeting notes, week %d", k%52+1),
			Body:   body.String(),
			Tags:   []string{"notes"},
			Parent: 0,
		})
	}
	return out
}
