package campaign

import (
	"errors"
	"fmt"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/store"
)

// ErrNothingToResume means a resume named no campaign and the store holds none.
var ErrNothingToResume = errors.New("nothing to resume")

// Resume finds the campaign a resumed fuzz continues and returns its stored spec, with a note
// for the user. The campaign is the one id names; else, when fromFlags (a seed base was
// given), the one the flags' spec names; else the newest fuzz campaign in the store. A
// campaign the flags name that is not stored yet starts from the flags: a retried shard (a
// Kubernetes pod, a CI job) passes --resume every time, and its first attempt has nothing to
// resume yet. A stored campaign's own spec applies, not the flags'.
//
// The errors a user fixes by naming another campaign wrap ErrNothingToResume or
// store.ErrNoCampaign; the others are the store's.
func Resume(st *store.Store, id string, fromFlags bool, flags Spec) (Spec, string, error) {
	switch {
	case id != "":
	case fromFlags:
		id = flags.ID()
	default:
		cs, err := st.Campaigns(store.KindFuzz)
		if err != nil {
			return flags, "", err
		}
		if len(cs) == 0 {
			return flags, "", fmt.Errorf("%w: %s holds no campaign", ErrNothingToResume, st.Path())
		}
		id = cs[0].ID
	}
	c, err := st.GetCampaign(id)
	if errors.Is(err, store.ErrNoCampaign) && fromFlags {
		return flags, fmt.Sprintf("campaign %s is not in %s yet: starting it", id, st.Path()), nil
	}
	if err != nil {
		return flags, "", fmt.Errorf("cannot resume: %w in %s", err, st.Path())
	}
	spec, err := ParseSpec(c)
	if err != nil {
		return flags, "", fmt.Errorf("campaign %s has an unreadable spec: %w", id, err)
	}
	return spec, fmt.Sprintf("resuming campaign %s (seed base %s, created %s); its own walkers, workloads and JDKs apply",
		c.ID, c.SeedBase, c.Created.Format(time.RFC3339)), nil
}
