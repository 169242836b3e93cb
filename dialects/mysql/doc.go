// Package mysql is the MySQL and MariaDB dialect: go-sql-driver/mysql under
// bun's mysqldialect, always with parseTime so dates scan as time.Time.
//
// Introspection reads information_schema for DATABASE(). MySQL commits
// each DDL statement on its own, so every schema change is made as a
// single statement, which InnoDB applies completely or not at all.
//
// It imports bun, the driver, the dialects root and dialects/internal only.
package mysql
