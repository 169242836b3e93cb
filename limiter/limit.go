package limiter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Type is the kind of a limit: what it counts. The ten values are the
// spec's limit types; see the Type constants.
type Type string

// The ten limit types of the spec.
const (
	// TypeInstance counts every request across the whole instance.
	TypeInstance Type = "instance"
	// TypeUser counts the requests of one user (Limit.UserID).
	TypeUser Type = "instance.user"
	// TypeEachUser counts separately for each authenticated user.
	TypeEachUser Type = "instance.each_user"
	// TypeRole counts the requests of every caller in one role (Limit.RoleID).
	TypeRole Type = "instance.role"
	// TypeService counts the requests against one service (Limit.ServiceID).
	TypeService Type = "instance.service"
	// TypeUserService counts one user's requests against one service.
	TypeUserService Type = "instance.user.service"
	// TypeEachUserService counts per authenticated user against one service.
	TypeEachUserService Type = "instance.each_user.service"
	// TypeServiceEndpoint counts the requests against one endpoint of a service.
	TypeServiceEndpoint Type = "instance.service.endpoint"
	// TypeUserServiceEndpoint counts one user's requests against one endpoint.
	TypeUserServiceEndpoint Type = "instance.user.service.endpoint"
	// TypeEachUserServiceEndpoint counts per authenticated user against one endpoint.
	TypeEachUserServiceEndpoint Type = "instance.each_user.service.endpoint"
)

// Types lists the ten limit types in the spec's order.
func Types() []Type {
	return []Type{
		TypeInstance, TypeUser, TypeEachUser, TypeRole, TypeService,
		TypeUserService, TypeEachUserService, TypeServiceEndpoint,
		TypeUserServiceEndpoint, TypeEachUserServiceEndpoint,
	}
}

// level is where in the instance > service > endpoint hierarchy a type counts.
type level uint8

const (
	levelInstance level = iota
	levelService
	levelEndpoint
)

// typeInfo is the decoded shape of a Type.
type typeInfo struct {
	valid    bool
	user     bool // a specific user (UserID)
	eachUser bool // every authenticated user separately
	role     bool // RoleID
	level    level
}

func (t Type) info() typeInfo {
	switch t {
	case TypeInstance:
		return typeInfo{valid: true, level: levelInstance}
	case TypeUser:
		return typeInfo{valid: true, user: true, level: levelInstance}
	case TypeEachUser:
		return typeInfo{valid: true, eachUser: true, level: levelInstance}
	case TypeRole:
		return typeInfo{valid: true, role: true, level: levelInstance}
	case TypeService:
		return typeInfo{valid: true, level: levelService}
	case TypeUserService:
		return typeInfo{valid: true, user: true, level: levelService}
	case TypeEachUserService:
		return typeInfo{valid: true, eachUser: true, level: levelService}
	case TypeServiceEndpoint:
		return typeInfo{valid: true, level: levelEndpoint}
	case TypeUserServiceEndpoint:
		return typeInfo{valid: true, user: true, level: levelEndpoint}
	case TypeEachUserServiceEndpoint:
		return typeInfo{valid: true, eachUser: true, level: levelEndpoint}
	}
	return typeInfo{}
}

// Valid reports whether t is one of the ten limit types.
func (t Type) Valid() bool { return t.info().valid }

// NeedsUser reports whether limits of type t name a specific user (UserID).
func (t Type) NeedsUser() bool { return t.info().user }

// EachUser reports whether limits of type t count each authenticated user
// separately.
func (t Type) EachUser() bool { return t.info().eachUser }

// NeedsRole reports whether limits of type t name a role (RoleID).
func (t Type) NeedsRole() bool { return t.info().role }

// NeedsService reports whether limits of type t name a service (ServiceID).
func (t Type) NeedsService() bool { return t.info().level >= levelService }

// NeedsEndpoint reports whether limits of type t name an endpoint.
func (t Type) NeedsEndpoint() bool { return t.info().level == levelEndpoint }

// Period is the length of a limit's counting window.
type Period string

// The five periods of the spec.
const (
	// PeriodMinute is a window of 60 seconds.
	PeriodMinute Period = "minute"
	// PeriodHour is a window of one hour.
	PeriodHour Period = "hour"
	// PeriodDay is a window of 24 hours.
	PeriodDay Period = "day"
	// PeriodWeek is a window of 7 days.
	PeriodWeek Period = "7-day"
	// PeriodMonth is a window of 30 days.
	PeriodMonth Period = "30-day"
)

var periods = [...]Period{PeriodMinute, PeriodHour, PeriodDay, PeriodWeek, PeriodMonth}

// Periods lists the five periods in DreamFactory's index order (0..4).
func Periods() []Period { return append([]Period(nil), periods[:]...) }

// Duration returns the window length of p, or 0 when p is not a valid period.
func (p Period) Duration() time.Duration {
	switch p {
	case PeriodMinute:
		return time.Minute
	case PeriodHour:
		return time.Hour
	case PeriodDay:
		return 24 * time.Hour
	case PeriodWeek:
		return 7 * 24 * time.Hour
	case PeriodMonth:
		return 30 * 24 * time.Hour
	}
	return 0
}

// Valid reports whether p is one of the five periods.
func (p Period) Valid() bool { return p.Duration() > 0 }

// Index returns DreamFactory's integer encoding of p (minute 0 … 30-day 4),
// or -1 when p is not a valid period.
func (p Period) Index() int {
	for i, q := range periods {
		if p == q {
			return i
		}
	}
	return -1
}

// PeriodFromIndex returns the period DreamFactory stores as index i (0..4).
func PeriodFromIndex(i int) (Period, bool) {
	if i < 0 || i >= len(periods) {
		return "", false
	}
	return periods[i], true
}

var verbs = [...]string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// Verbs lists the HTTP methods a limit may be restricted to.
func Verbs() []string { return append([]string(nil), verbs[:]...) }

// canonicalVerb returns the upper-case form of v when it is one of Verbs.
func canonicalVerb(v string) (string, bool) {
	for _, m := range verbs {
		if strings.EqualFold(v, m) {
			return m, true
		}
	}
	return "", false
}

// Limit is one rate limit, mirroring the system record
// (/api/v2/system/limit). Zero IDs mean "not set". Fields that the Type does
// not use are ignored by the engine; Normalized clears them.
type Limit struct {
	// ID is the record id. It is part of every counter key, so two limits
	// never share a counter. The Engine requires it to be positive and unique.
	ID int64
	// Name is the record's name (required).
	Name string
	// Description is free text; it does not affect counting.
	Description string
	// Type is one of the ten limit types.
	Type Type
	// Rate is the number of requests allowed per Period (> 0).
	Rate int64
	// Period is the counting window.
	Period Period
	// UserID is the user of the instance.user* types.
	UserID int64
	// RoleID is the role of the instance.role type.
	RoleID int64
	// ServiceID is the service of the *.service* types.
	ServiceID int64
	// Endpoint is the resource path below the service for the *.endpoint
	// types, such as "_table/contact" or "_table/*"; see Bucket and
	// NormalizeEndpoint for how it matches.
	Endpoint string
	// Verb restricts the limit to one HTTP method; empty means every method.
	Verb string
	// Active is the record's is_active flag; inactive limits never count.
	Active bool
}

// FieldError is one problem found by Limit.Validate. Its Error text is a
// message safe to show to the client.
type FieldError struct {
	// Field is the record field at fault, in the API's snake_case
	// ("user_id", "period", …).
	Field string
	// Message describes the problem.
	Message string
}

// Error returns the message.
func (e *FieldError) Error() string { return e.Message }

// maxEndpointLen bounds a limit's endpoint pattern.
const maxEndpointLen = 1024

// Validate reports every problem of l at once, joined with errors.Join; each
// joined error is a *FieldError. It returns nil for a valid limit. The ID is
// not checked (a record being created has none yet), and fields the type does
// not use are not errors (they are ignored; see Normalized).
func (l Limit) Validate() error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if strings.TrimSpace(l.Name) == "" {
		add("name", "name must be specified.")
	}
	ti := l.Type.info()
	if !ti.valid {
		add("type", "type %q is not a valid limit type; expected one of %s.", string(l.Type), typeList())
	}
	if l.Rate <= 0 {
		add("rate", "Limit rate must be a positive integer. Limit not saved.")
	}
	if !l.Period.Valid() {
		add("period", "period %q is not valid; expected one of minute, hour, day, 7-day, 30-day.", string(l.Period))
	}
	if l.Verb != "" {
		if _, ok := canonicalVerb(l.Verb); !ok {
			add("verb", "Verb is invalid or not allowed.")
		}
	}
	if ti.user && l.UserID <= 0 {
		add("user_id", "user_id must be specified with this limit type. Limit: %s", l.Name)
	}
	if ti.role && l.RoleID <= 0 {
		add("role_id", "role_id must be specified with this limit type. Limit: %s", l.Name)
	}
	if ti.valid && ti.level >= levelService && l.ServiceID <= 0 {
		add("service_id", "service_id must be specified with this limit type.")
	}
	if ti.valid && ti.level == levelEndpoint {
		if strings.Trim(l.Endpoint, "/ ") == "" {
			add("endpoint", "endpoint must be specified with this limit type.")
		} else if _, err := compilePattern(l.Endpoint); err != nil {
			add("endpoint", "%s", err.Error())
		}
	}
	return errors.Join(errs...)
}

func typeList() string {
	ts := Types()
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// Normalized returns a copy of l with the fields its type does not use
// cleared (as DreamFactory forces them to null), the verb in upper case and
// the endpoint trimmed of surrounding blanks. It does not validate.
func (l Limit) Normalized() Limit {
	ti := l.Type.info()
	if !ti.user {
		l.UserID = 0
	}
	if !ti.role {
		l.RoleID = 0
	}
	if ti.level < levelService {
		l.ServiceID = 0
	}
	if ti.level != levelEndpoint {
		l.Endpoint = ""
	}
	l.Endpoint = strings.TrimSpace(l.Endpoint)
	if v, ok := canonicalVerb(l.Verb); ok {
		l.Verb = v
	}
	return l
}

// KeyText returns DreamFactory's key_text for l (Limit::resolveCheckKey):
// the string that identifies a limit's parameters, unique among limits, for
// example "instance.user:3.minute", "instance.verb:DELETE.day" or
// "instance.service:5.endpoint:_table/contact.minute". each_user types have
// an empty user id ("instance.each_user:.hour"). The endpoint appears in its
// canonical form (NormalizeEndpoint), so "_table/contact/17" and
// "_table/contact/18" give the same key text. Use it to refuse duplicates.
// It is not a counter key (see Outcome.Key).
func (l Limit) KeyText() string {
	l = l.Normalized()
	ti := l.Type.info()
	var b strings.Builder
	b.WriteString("instance")
	switch {
	case ti.user:
		b.WriteString(".user:")
		b.WriteString(strconv.FormatInt(l.UserID, 10))
	case ti.eachUser:
		b.WriteString(".each_user:")
	case ti.role:
		b.WriteString(".role:")
		b.WriteString(strconv.FormatInt(l.RoleID, 10))
	}
	if ti.level >= levelService {
		b.WriteString(".service:")
		b.WriteString(strconv.FormatInt(l.ServiceID, 10))
	}
	if ti.level == levelEndpoint {
		b.WriteString(".endpoint:")
		if ep, err := NormalizeEndpoint(l.Endpoint); err == nil {
			b.WriteString(ep)
		} else {
			b.WriteString(l.Endpoint)
		}
	}
	if l.Verb != "" {
		b.WriteString(".verb:")
		b.WriteString(l.Verb)
	}
	b.WriteByte('.')
	b.WriteString(string(l.Period))
	return b.String()
}
