package admit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// nearestMax is how many entries of a folder missingDetail looks at: a
// folder of scans may hold thousands, and a name a slip away is found
// among them, but the check is not worth a folder of millions.
const nearestMax = 20000

// missingDetail is the detail of a missing_file rejection of path (as the
// manifest writes it), joined to root as p: when the folder p names
// exists and holds a file whose name is a slip away from the one asked
// for (another case, an extension left off or doubled, a character or two
// off), it says that file's name, which the row most likely meant. It
// names a file of the row's own folder, never a folder: the detail goes
// into the journal and the report, which name no path.
func missingDetail(p string) string {
	const missing = "the file does not exist"
	want := filepath.Base(p)
	f, err := os.Open(filepath.Dir(p))
	if err != nil {
		return missing
	}
	defer f.Close()
	names, _ := f.Readdirnames(nearestMax)
	best, bestD := "", 0
	for _, n := range names {
		d := nameDistance(want, n)
		if d > 0 && (best == "" || d < bestD || d == bestD && n < best) {
			best, bestD = n, d
		}
	}
	limit := max(2, len([]rune(want))/4)
	if best == "" || bestD > limit {
		return missing
	}
	how := fmt.Sprintf("%d character%s away", bestD, map[bool]string{true: "", false: "s"}[bestD == 1])
	if strings.EqualFold(best, want) {
		how = "the same name in another case"
	}
	return fmt.Sprintf("%s; its folder has %q (%s): fix the path if that is the file", missing, best, how)
}

// nameDistance is the edit distance between two file names, letters
// compared ignoring case, plus one when they differ only in case (so that
// it is never 0 for two different names).
func nameDistance(a, b string) int {
	if a == b {
		return 0
	}
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	if prev[len(rb)] == 0 {
		return 1 // only the case differs
	}
	return prev[len(rb)]
}
