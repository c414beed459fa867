package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// The word lists are invented or generic on purpose: no clinic, clinician
// or patient in the corpus refers to anyone real.
var (
	clinicStems    = []string{"Alder", "Birch", "Cedar", "Elm", "Hazel", "Juniper", "Linden", "Maple", "Rowan", "Willow", "Larch", "Holly"}
	clinicSuffixes = []string{"brook", "field", "gate", "moor", "ridge", "stead", "wick", "vale", "cross", "ford"}
	clinicKinds    = []string{"Community Clinic", "Family Practice", "Health Centre", "Medical Group", "Primary Care"}
	nameStarts     = []string{"Mar", "Tel", "Ron", "Bel", "Cas", "Dor", "Fen", "Gar", "Hol", "Lin", "Pem", "Sal", "Tor", "Wen"}
	nameEnds       = []string{"ford", "wick", "sby", "ton", "dale", "mere", "ley", "worth", "combe", "hurst"}
	initials       = []string{"A", "B", "C", "D", "E", "F", "G", "H", "J", "K", "L", "M", "N", "P", "R", "S", "T", "W"}
	specialties    = []string{"Cardiology", "Dermatology", "Endocrinology", "Gastroenterology", "Neurology", "Respiratory Medicine", "Rheumatology", "Physiotherapy"}
	complaints     = []string{
		"intermittent headaches", "lower back pain", "a persistent cough", "ongoing fatigue",
		"joint stiffness in the mornings", "shortness of breath on exertion", "recurring dizziness",
		"poor sleep", "palpitations at rest", "a rash on both forearms", "reduced appetite",
		"swelling of the ankles", "numbness in the left hand",
	}
	durations = []string{"two weeks", "three weeks", "six weeks", "two months", "four months", "several months", "about a year"}
	findings  = []string{
		"Examination today was unremarkable apart from mild tenderness.",
		"Blood pressure was slightly raised on two readings.",
		"Routine blood tests were within normal limits.",
		"Symptoms improved briefly with rest but have since returned.",
		"There is no relevant family history.",
		"The participant is otherwise fit and active.",
		"A trial of simple analgesia gave partial relief.",
		"Weight has been stable over the last year.",
		"No red flag symptoms were reported at this visit.",
		"The participant keeps a symptom diary and brought it along.",
	}
	requests = []string{
		"Please assess and advise on further management.",
		"I would be grateful for your opinion on further investigation.",
		"Please consider whether imaging is needed.",
		"Kindly review and arrange follow up as you see fit.",
		"Please see within the routine waiting time.",
	}
	histories = []string{
		"The participant has been enrolled in the study since last spring.",
		"Previous reviews in this clinic noted similar but milder episodes.",
		"Current medication has not changed in the last six months.",
		"The participant works full time and reports moderate stress.",
		"An earlier referral for the same problem was not completed.",
		"The participant prefers appointments in the morning.",
		"Allergies: none known.",
		"Smoking status: never smoked.",
	}
	observations = [][2]string{
		{"Blood pressure", "mmHg"}, {"Heart rate", "bpm"}, {"Weight", "kg"},
		{"Temperature", "C"}, {"Oxygen saturation", "%"}, {"Respiratory rate", "/min"},
	}
)

// form is the content of one referral, independent of how it is drawn.
// Each page is a list of blocks in reading order.
type form struct {
	Clinic        string
	ParticipantID string
	ReferralDate  string
	Clinician     string
	Consent       bool
	Pages         [][]block
}

// blockKind says how a block is laid out.
type blockKind int

const (
	blockTitle   blockKind = iota // the clinic name, large and bold
	blockHeading                  // a section heading, bold
	blockField                    // a "Label: value" line
	blockPara                     // free text, word-wrapped
	blockTable                    // rows of cells; the first row is the header
	blockFooter                   // "Page i of n", at the bottom margin
	blockGap                      // vertical space
)

// block is one unit of layout. Text holds the drawn text; a table's cells
// are in Rows.
type block struct {
	Kind blockKind
	Text string
	Rows [][]string
}

// pick returns a random element of list.
func pick[T any](r *rand.Rand, list []T) T {
	return list[r.IntN(len(list))]
}

// newForm draws a referral's content from r. pages is clamped to 1..4.
func newForm(r *rand.Rand, participantID, date string, consent bool, pages int) form {
	pages = max(1, min(4, pages))
	f := form{
		Clinic:        pick(r, clinicStems) + pick(r, clinicSuffixes) + " " + pick(r, clinicKinds),
		ParticipantID: participantID,
		ReferralDate:  date,
		Clinician:     fmt.Sprintf("Dr %s. %s%s", pick(r, initials), pick(r, nameStarts), pick(r, nameEnds)),
		Consent:       consent,
	}
	consentText := "Yes"
	if !consent {
		consentText = "No"
	}
	first := []block{
		{Kind: blockTitle, Text: f.Clinic},
		{Kind: blockHeading, Text: "Referral Form"},
		{Kind: blockGap},
		{Kind: blockField, Text: "Participant ID: " + participantID},
		{Kind: blockField, Text: "Referral date: " + date},
		{Kind: blockField, Text: "Referring clinician: " + f.Clinician},
		{Kind: blockField, Text: "Referred to: " + pick(r, specialties)},
		{Kind: blockField, Text: "Consent to share records: " + consentText},
		{Kind: blockGap},
		{Kind: blockHeading, Text: "Reason for referral"},
		{Kind: blockPara, Text: reasonParagraph(r)},
	}
	// A third of single-page forms and the first page of some longer ones
	// carry a table, so tables appear both alone and among prose.
	if r.IntN(3) == 0 {
		first = append(first, block{Kind: blockGap}, block{Kind: blockHeading, Text: "Recent observations"}, observationTable(r, date))
	}
	f.Pages = append(f.Pages, first)
	for p := 1; p < pages; p++ {
		var page []block
		page = append(page,
			block{Kind: blockHeading, Text: "Clinical history"},
			block{Kind: blockPara, Text: sentences(r, histories, 3+r.IntN(3))},
			block{Kind: blockGap},
		)
		if r.IntN(2) == 0 {
			page = append(page, block{Kind: blockHeading, Text: "Observations"}, observationTable(r, date), block{Kind: blockGap})
		}
		page = append(page,
			block{Kind: blockHeading, Text: "Requested action"},
			block{Kind: blockPara, Text: pick(r, requests) + " " + sentences(r, findings, 1+r.IntN(2))},
		)
		f.Pages = append(f.Pages, page)
	}
	for i := range f.Pages {
		f.Pages[i] = append(f.Pages[i], block{Kind: blockFooter, Text: fmt.Sprintf("Page %d of %d", i+1, pages)})
	}
	return f
}

// reasonParagraph is the free-text reason for referral.
func reasonParagraph(r *rand.Rand) string {
	return fmt.Sprintf("Thank you for seeing this participant, who reports %s for %s. %s %s",
		pick(r, complaints), pick(r, durations), sentences(r, findings, 2+r.IntN(3)), pick(r, requests))
}

// sentences joins n distinct sentences from list in a random order.
func sentences(r *rand.Rand, list []string, n int) string {
	n = min(n, len(list))
	idx := r.Perm(len(list))[:n]
	out := make([]string, n)
	for i, j := range idx {
		out[i] = list[j]
	}
	return strings.Join(out, " ")
}

// observationTable is a small table of measurements taken before date.
func observationTable(r *rand.Rand, date string) block {
	day, _ := time.Parse(time.DateOnly, date)
	rows := [][]string{{"Measurement", "Value", "Unit", "Taken"}}
	for _, i := range r.Perm(len(observations))[:2+r.IntN(3)] {
		o := observations[i]
		rows = append(rows, []string{o[0], observationValue(r, o[0]), o[1], day.AddDate(0, 0, -r.IntN(30)).Format(time.DateOnly)})
	}
	return block{Kind: blockTable, Rows: rows}
}

// observationValue is a plausible reading for the named measurement.
func observationValue(r *rand.Rand, name string) string {
	switch name {
	case "Blood pressure":
		return fmt.Sprintf("%d/%d", 110+r.IntN(40), 65+r.IntN(25))
	case "Heart rate":
		return fmt.Sprint(55 + r.IntN(45))
	case "Weight":
		return fmt.Sprintf("%d.%d", 50+r.IntN(60), r.IntN(10))
	case "Temperature":
		return fmt.Sprintf("%d.%d", 36+r.IntN(2), r.IntN(10))
	case "Oxygen saturation":
		return fmt.Sprint(94 + r.IntN(6))
	default:
		return fmt.Sprint(12 + r.IntN(8))
	}
}

// participantID returns a fresh "P-nnnnnn" not yet in used, and records it.
func participantID(r *rand.Rand, used map[string]bool) string {
	for {
		id := fmt.Sprintf("P-%06d", r.IntN(1_000_000))
		if !used[id] {
			used[id] = true
			return id
		}
	}
}

// referralDate returns a date between 2019-01-01 and 2025-12-31.
func referralDate(r *rand.Rand) string {
	start := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	days := int(end.Sub(start).Hours() / 24)
	return start.AddDate(0, 0, r.IntN(days+1)).Format(time.DateOnly)
}
