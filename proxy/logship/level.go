package logship

import (
	"fmt"
	"strconv"
	"strings"
)

// Level is a syslog severity as GELF numbers it: 0 (EMERGENCY) is the most
// severe, 7 (DEBUG) the least.
type Level int8

// The levels, with their GELF numbers.
const (
	Emergency Level = 0
	Alert     Level = 1
	Critical  Level = 2
	Error     Level = 3
	Warning   Level = 4
	Notice    Level = 5
	Info      Level = 6
	Debug     Level = 7
)

var levelNames = [...]string{"EMERGENCY", "ALERT", "CRITICAL", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG"}

// monolog are the Monolog numbers DreamFactory sends as _level on its
// non-GELF protocols.
var monolog = [...]int{600, 550, 500, 400, 300, 250, 200, 100}

// String is the level's name in capitals (INFO).
func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return "Level(" + strconv.Itoa(int(l)) + ")"
	}
	return levelNames[l]
}

// Monolog is the level's Monolog number (INFO 200, ERROR 400).
func (l Level) Monolog() int {
	if l < 0 || int(l) >= len(monolog) {
		return 200
	}
	return monolog[l]
}

// ParseLevel reads a level by name, in any case (also WARN, ERR, CRIT,
// EMERG), or by its GELF number "0" to "7".
func ParseLevel(s string) (Level, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	for i, n := range levelNames {
		if u == n {
			return Level(i), nil
		}
	}
	switch u {
	case "WARN":
		return Warning, nil
	case "ERR":
		return Error, nil
	case "CRIT":
		return Critical, nil
	case "EMERG":
		return Emergency, nil
	}
	if n, err := strconv.Atoi(u); err == nil && n >= 0 && n <= 7 {
		return Level(n), nil
	}
	return Info, fmt.Errorf("unknown log level [%s]", s)
}

// StatusLevel is the level of a request answered with status: ERROR for
// 5xx, WARNING for 4xx, INFO for the rest.
func StatusLevel(status int) Level {
	switch {
	case status >= 500:
		return Error
	case status >= 400:
		return Warning
	}
	return Info
}
