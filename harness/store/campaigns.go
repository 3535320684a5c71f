package store

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Campaign is one seeded campaign; shards of a campaign share its row.
type Campaign struct {
	ID       string
	Kind     string // fuzz | replay
	SeedBase string
	Spec     string // JSON, opaque to the store
	Created  time.Time
	Host     string
}

// Campaign kinds.
const (
	KindFuzz   = "fuzz"
	KindReplay = "replay"
)

// PutCampaign records a campaign unless a row with its id exists (shards and resumes meet here).
func (s *Store) PutCampaign(c Campaign) error {
	_, err := s.db.Exec(`INSERT OR IGNORE INTO campaigns(id, kind, seed_base, spec, created_ms, host) VALUES(?,?,?,?,?,?)`,
		c.ID, c.Kind, c.SeedBase, c.Spec, c.Created.UnixMilli(), c.Host)
	if err != nil {
		return fmt.Errorf("store: campaign %s: %v", c.ID, err)
	}
	return nil
}

// ErrNoCampaign means the store holds no such campaign.
var ErrNoCampaign = errors.New("no such campaign")

// GetCampaign loads one campaign.
func (s *Store) GetCampaign(id string) (Campaign, error) {
	row := s.db.QueryRow(`SELECT id, kind, seed_base, spec, created_ms, host FROM campaigns WHERE id = ?`, id)
	c, err := scanCampaign(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("campaign %s: %w", id, ErrNoCampaign)
	}
	return c, err
}

// Campaigns lists campaigns of a kind ("" for all), newest first.
func (s *Store) Campaigns(kind string) ([]Campaign, error) {
	rows, err := s.db.Query(`SELECT id, kind, seed_base, spec, created_ms, host FROM campaigns
		WHERE ? = '' OR kind = ? ORDER BY created_ms DESC, id DESC`, kind, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Campaign
	for rows.Next() {
		c, err := scanCampaign(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func scanCampaign(scan func(...any) error) (Campaign, error) {
	var c Campaign
	var ms int64
	err := scan(&c.ID, &c.Kind, &c.SeedBase, &c.Spec, &ms, &c.Host)
	c.Created = time.UnixMilli(ms).UTC()
	return c, err
}
