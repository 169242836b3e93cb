package store

import (
	"strconv"
	"strings"

	"github.com/portcullis-dev/portcullis/limiter"
)

// Engine converts the stored limit to the limits engine's form: the one
// conversion the rate-limit stage, limit_cache and limit validation share.
// The period may be a name or DreamFactory's index ("0" minute … "4"
// 30-day); null ids are 0.
func (l *Limit) Engine() limiter.Limit {
	deref := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	period := strings.ToLower(strings.TrimSpace(l.Period))
	if n, err := strconv.Atoi(period); err == nil {
		if p, ok := limiter.PeriodFromIndex(n); ok {
			period = string(p)
		}
	}
	return limiter.Limit{
		ID:          l.ID,
		Name:        l.Name,
		Description: l.Description,
		Type:        limiter.Type(strings.TrimSpace(l.Type)),
		Rate:        int64(l.Rate),
		Period:      limiter.Period(period),
		UserID:      deref(l.UserID),
		RoleID:      deref(l.RoleID),
		ServiceID:   deref(l.ServiceID),
		Endpoint:    l.Endpoint,
		Verb:        strings.TrimSpace(l.Verb),
		Active:      l.IsActive,
	}
}
