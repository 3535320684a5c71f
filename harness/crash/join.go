package crash

import "slices"

// Names are the titles one finding goes by: its title, then its alternative titles (the
// title without the walker, the same for the next frame down).
type Names struct {
	Title string   `json:"title"`
	Alt   []string `json:"alt_titles,omitempty"`
}

// Names of this report.
func (r *Report) Names() Names { return Names{r.Title, r.AltTitles} }

// SameBug reports whether two findings are one bug, as syzkaller joins alt titles: the title
// of one is among the titles of the other. So one bug still meets itself when a JDK inlines
// its culprit into the caller (golden 007 and 031), or a cut log loses the walker's entry
// (008 and 026). Two alternatives alone never join: two culprits under one caller are two bugs.
func SameBug(a, b Names) bool {
	if a.Title == "" || b.Title == "" {
		return false
	}
	return a.Title == b.Title || slices.Contains(b.Alt, a.Title) || slices.Contains(a.Alt, b.Title)
}

// Joins reports whether n is the same bug as any of the names one bug was filed under.
func Joins(n Names, bug []Names) bool {
	for _, m := range bug {
		if SameBug(n, m) {
			return true
		}
	}
	return false
}
