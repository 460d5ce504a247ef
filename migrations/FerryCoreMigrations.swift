// The module FerryCoreMigrations is this directory: Ferry's own migrations, built in.
//
// Its one declaration, `CoreMigrations.files` (each .sql file's name and bytes), is
// generated at build time by the EmbedFiles plugin from CoreMigrations.embed;
// FerryMigrations reads it as `MigrationFile.core()`. SwiftPM builds a target only
// when it has a Swift file of its own, hence this one; and because the .sql files
// belong to the target, a file added here is in the next build.
