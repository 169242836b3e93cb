// Package mysql is the MySQL and MariaDB dialect: go-sql-driver/mysql under
// bun's mysqldialect, always with parseTime so dates scan as time.Time.
//
// It imports bun, the driver and the dialects root only.
package mysql
