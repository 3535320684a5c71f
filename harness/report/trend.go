package report

import (
	"fmt"
	"math"
	"sort"

	"github.com/walkfuzz/walkfuzz/harness/store"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

type trendPoint struct {
	label string
	cells []store.Cell
}

// trend charts each walker's complete-trace share over nights; before the first night it
// falls back to days of fuzzing runs.
func trend(nights []store.Night, runs []store.Run) *LineChart {
	var pts []trendPoint
	caption := "complete-trace share per walker, one point per nightly run"
	for _, n := range nights {
		pts = append(pts, trendPoint{label: n.Started.Format("01-02 15:04"), cells: n.Cells})
	}
	if len(pts) == 0 {
		caption = "complete-trace share per walker, one point per day of fuzzing (no nightly runs yet)"
		byDay := map[string][]store.Run{}
		for _, r := range runs {
			d := r.Ended.Format("2006-01-02")
			byDay[d] = append(byDay[d], r)
		}
		days := make([]string, 0, len(byDay))
		for d := range byDay {
			days = append(days, d)
		}
		sort.Strings(days)
		for _, d := range days {
			pts = append(pts, trendPoint{label: d[5:], cells: store.Cells(byDay[d])})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	type sums struct{ ok, walks uint64 }
	perWalker := map[string][]*sums{}
	for i, p := range pts {
		for _, c := range p.cells {
			s := perWalker[c.Walker]
			if s == nil {
				s = make([]*sums, len(pts))
				perWalker[c.Walker] = s
			}
			if s[i] == nil {
				s[i] = &sums{}
			}
			s[i].ok += c.Classes[walkclass.OK]
			s[i].walks += c.Walks
		}
	}
	names := make([]string, 0, len(perWalker))
	for w := range perWalker {
		names = append(names, w)
	}
	walker.Sort(names)

	lo := 1.0
	for _, w := range names {
		for _, s := range perWalker[w] {
			if s != nil && s.walks > 0 {
				lo = math.Min(lo, float64(s.ok)/float64(s.walks))
			}
		}
	}
	lo = math.Max(0, math.Floor(lo*10-0.5)/10) // a decile below the lowest point
	c := &LineChart{Width: chartW + 200, PlotX: 60, PlotY: 12, PlotH: 220, Caption: caption}
	c.PlotW = c.Width - c.PlotX - 50 // room for the last date label
	x := func(i int) float64 {
		if len(pts) == 1 {
			return c.PlotX + c.PlotW/2
		}
		return c.PlotX + float64(i)/float64(len(pts)-1)*c.PlotW
	}
	y := func(v float64) float64 { return c.PlotY + (1-(v-lo)/(1-lo))*c.PlotH }
	for _, w := range names {
		s := Series{Name: w, Color: walker.Color(w)}
		for i, p := range perWalker[w] {
			if p == nil || p.walks == 0 {
				continue
			}
			v := float64(p.ok) / float64(p.walks)
			s.Points += fmt.Sprintf("%.1f,%.1f ", x(i), y(v))
			s.Dots = append(s.Dots, Dot{X: x(i), Y: y(v), Title: fmt.Sprintf("%s %s: %.2f%% complete of %d walks", w, pts[i].label, 100*v, p.walks)})
		}
		c.Series = append(c.Series, s)
	}
	step := max(1, len(pts)/8)
	for i := 0; i < len(pts); i += step {
		c.XLabels = append(c.XLabels, Tick{X: x(i), Y: c.PlotY + c.PlotH + 16, Label: pts[i].label})
	}
	for k := 0; k <= 4; k++ {
		v := lo + (1-lo)*float64(k)/4
		c.YTicks = append(c.YTicks, Tick{X: c.PlotX - 6, Y: y(v) + 4, Label: fmt.Sprintf("%.0f%%", 100*v)})
	}
	for i, w := range names {
		c.Legend = append(c.Legend, Legend{X: c.PlotX + float64(i)*110, Y: c.PlotY + c.PlotH + 36, Color: walker.Color(w), Label: w})
	}
	c.Height = c.PlotY + c.PlotH + 48
	return c
}
