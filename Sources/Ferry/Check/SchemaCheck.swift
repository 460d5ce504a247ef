/// `ferry check`: what is wrong with an app's schema as Ferry will serve it, found in
/// its facts alone (`SchemaFacts`); `SchemaProbe` adds what only running a statement
/// shows. Pure, so each finding is tested without a database.
public enum SchemaCheck {
    /// Every finding for every synced table, errors first.
    public static func findings(_ facts: SchemaFacts) -> [SchemaFinding] {
        var found: [SchemaFinding] = []
        for table in facts.tables {
            found += serving(table, facts)
            guard table.schema == facts.servedSchema, table.readable else { continue }
            found += rowLevelSecurity(table, role: facts.role)
            found += servedPastPolicies(table, role: facts.role)
            found += policies(table)
            found += grants(table, role: facts.role)
            found += identity(table)
            found += offlineIds(table)
            found += ruleColumns(table)
            found += columns(table, role: facts.role)
            found += indexes(table)
            found += membership(table)
            found += grantTriggers(table)
        }
        found += exposures(facts)
        found += messagesLanguage(facts)
        return found.sorted { ($0.severity, $0.object, $0.code) < ($1.severity, $1.object, $1.code) }
    }

    /// Whether `ferry serve` serves the table at all.
    static func serving(_ table: SchemaFacts.Table, _ facts: SchemaFacts) -> [SchemaFinding] {
        if table.schema != facts.servedSchema {
            return [
                .init(
                    .warning, "not_served", table.name,
                    "it is synced but not in the served schema \(facts.servedSchema), so no resource serves it",
                    fix: "move it (ALTER TABLE \(table.name) SET SCHEMA \(facts.servedSchema)), or serve its schema (database.schema)")
            ]
        }
        // The catalog leaves these out (SchemaCatalog.reservedNames): only serve's log said so.
        if SchemaCatalog.reservedNames.contains(table.relname) {
            return [
                .init(
                    .error, "reserved_name", table.name,
                    "/v1/\(table.relname) is one of Ferry's own routes, so no resource serves this table and clients get 404",
                    fix:
                        "rename it in a new migration (ALTER TABLE \(table.name) RENAME TO \(table.relname == "users" ? "profiles" : "app_\(table.relname)")); "
                        + "Ferry keeps \(SchemaCatalog.reservedNames.sorted().joined(separator: ", ")) for itself")
            ]
        }
        guard !table.readable else { return [] }
        return [
            .init(
                .error, "not_readable", table.name,
                "the serve role \(facts.role) may not read it (SELECT on the table, USAGE on its schema), so it is no resource",
                fix: "GRANT USAGE ON SCHEMA \(table.schema) TO \(facts.role); GRANT SELECT ON \(table.name) TO \(facts.role); "
                    + "or give it a sync rule")
        ]
    }

    /// Row Level Security on, a policy to read and to write by, and functions policies may call.
    static func rowLevelSecurity(_ table: SchemaFacts.Table, role: String) -> [SchemaFinding] {
        guard table.rowLevelSecurity else {
            return [
                .init(
                    .error, "no_row_level_security", table.name,
                    "Row Level Security is off, so every user reads and writes every row",
                    fix: "give it a sync rule (SELECT ferry.sync_owned('\(table.name)', owner => 'owner_id'), or sync_child, "
                        + "sync_members), or ALTER TABLE \(table.name) ENABLE ROW LEVEL SECURITY with policies")
            ]
        }
        var found: [SchemaFinding] = []
        let covers = { (command: String) in table.policies.contains { $0.command == command || $0.command == "ALL" } }
        if !covers("SELECT") {
            found.append(
                .init(
                    .error, "no_read_policy", table.name,
                    "Row Level Security is on but no policy lets anyone read it, so every read finds nothing",
                    fix: "add a FOR SELECT policy, or give the table a sync rule"))
        }
        if !covers("UPDATE"), table.columns.contains(where: \.updatable) {
            found.append(
                .init(
                    .error, "no_write_policy", table.name,
                    "Row Level Security is on but no policy lets anyone update its rows, so every PATCH and DELETE fails",
                    fix: "add a FOR UPDATE policy, or give the table a sync rule"))
        }
        var seen: Set<String> = []
        for policy in table.policies {
            for function in policy.functions where seen.insert(function.signature).inserted {
                if function.volatility == "v" {
                    found.append(
                        .init(
                            .error, "volatile_policy_function", "\(table.name) policy \(policy.name)",
                            "it calls \(function.signature), which is VOLATILE: PostgreSQL cannot run it once per "
                                + "statement, so it runs for every row, and an index cannot use it",
                            fix: "ALTER FUNCTION \(function.signature) STABLE, if it only reads"))
                }
                if !function.executable {
                    found.append(
                        .init(
                            .error, "policy_function_not_executable", "\(table.name) policy \(policy.name)",
                            "it calls \(function.signature), which the serve role \(role) may not execute, so every "
                                + "statement on the table fails",
                            fix: "GRANT EXECUTE ON FUNCTION \(function.signature) TO \(role)"))
                }
            }
        }
        return found
    }

    /// Errors worded in another language than English. A few of PostgreSQL's errors share
    /// one SQLSTATE and differ only in their words (a Row Level Security refusal and a
    /// missing grant are both 42501), so Ferry reads those words.
    /// `lc_messages` can only be set by a superuser, so Ferry cannot set it on its own
    /// connections.
    static func messagesLanguage(_ facts: SchemaFacts) -> [SchemaFinding] {
        let locale = facts.messagesLocale.lowercased()
        let english =
            locale.isEmpty || ["c", "posix"].contains(locale) || locale.hasPrefix("c.") || locale == "en" || locale.hasPrefix("en_")
            || locale.hasPrefix("en-") || locale.hasPrefix("english")
        guard !english else { return [] }
        return [
            .init(
                .warning, "localized_messages", "lc_messages",
                "PostgreSQL words its errors to the serve role \(facts.role) in \(facts.messagesLocale), and Ferry tells some "
                    + "refusals apart by PostgreSQL's English words: a write refused by Row Level Security would be answered "
                    + "not_granted rather than not_allowed, and a number past numeric's range in a body 422 rather than 400",
                fix: "ALTER ROLE \(facts.role) SET lc_messages TO 'C' (as a superuser)")
        ]
    }

    /// A one-column primary key `id` of a type Ferry serves.
    static func identity(_ table: SchemaFacts.Table) -> [SchemaFinding] {
        guard table.primaryKey == ["id"], let id = table.column("id") else {
            let key = table.primaryKey.isEmpty ? "none" : "(\(table.primaryKey.joined(separator: ", ")))"
            return [
                .init(
                    .error, "bad_primary_key", table.name,
                    "its primary key is \(key), not id: Ferry names every row by a one-column primary key id",
                    fix: "ALTER TABLE \(table.name) ADD PRIMARY KEY (id), with the other columns UNIQUE if they must be")
            ]
        }
        // What `ferry serve` takes for an id, judged as it judges it: a domain over one of
        // them serves as it does (its values are the base type's).
        switch ValueKind(type: id.baseType) {
        case .uuid, .integer, .string: return []
        default:
            return [
                .init(
                    .error, "bad_id_type", "\(table.name).id",
                    "its type is \(id.type); Ferry serves ids of type uuid, text, varchar, char(n), citext, smallint, "
                        + "integer or bigint",
                    fix: "ALTER TABLE \(table.name) ALTER COLUMN id TYPE uuid (or another of those)")
            ]
        }
    }

    /// The columns a rule decides access by, which must name someone: a row whose owner,
    /// parent or scope is null belongs to nobody, and its create is refused by Row Level
    /// Security with a message about policies, not about the null.
    static func ruleColumns(_ table: SchemaFacts.Table) -> [SchemaFinding] {
        guard let rule = table.rule else { return [] }
        let names = [rule.column] + (rule.memberColumn.map { [$0] } ?? [])
        return names.compactMap { name in
            guard let column = table.column(name), !column.notNull else { return nil }
            return .init(
                .warning, "nullable_rule_column", "\(table.name).\(name)",
                "the table's \(rule.kind) rule decides who reads and writes a row by it, and it may be null: "
                    + "a row whose \(name) is null belongs to nobody, so every create without one is refused",
                fix: "ALTER TABLE \(table.name) ALTER COLUMN \(name) SET NOT NULL")
        }
    }

    /// Columns a client can never set, and the grant that deletes need.
    static func columns(_ table: SchemaFacts.Table, role: String) -> [SchemaFinding] {
        var found: [SchemaFinding] = []
        if let deleted = table.column("is_deleted"), !deleted.updatable {
            found.append(
                .init(
                    .error, "undeletable", "\(table.name).is_deleted",
                    "the serve role \(role) may not update it, and a DELETE is UPDATE … SET is_deleted = true, so every "
                        + "delete fails",
                    fix: "GRANT UPDATE (is_deleted) ON \(table.name) TO \(role), or give the table a sync rule"))
        }
        let declared = Set(table.rule?.readOnly ?? [])
        for column in table.columns
        where !["id", "revision", "last_modified", "is_deleted"].contains(column.name)
            && !column.generated && !declared.contains(column.name)
        {
            let object = "\(table.name).\(column.name)"
            if column.notNull, !column.hasDefault, !column.insertable {
                found.append(
                    .init(
                        .error, "required_column_not_insertable", object,
                        "it is NOT NULL without a default, and no client may set it, so every create fails",
                        fix: "GRANT INSERT (\(column.name)) ON \(table.name) TO \(role), or give it a default"))
            } else if !column.insertable, !column.updatable {
                // A key names the row's owner or parent: UPDATE on it lets a writer move the row
                // away (the takeover the guide warns of), so it is offered INSERT alone.
                let isKey = table.foreignKeys.contains { $0.columns.contains(column.name) }
                let grant =
                    isKey
                    ? "GRANT INSERT (\(column.name)) ON \(table.name) TO \(role) (set on create: UPDATE on a key lets a writer move the row away)"
                    : "GRANT INSERT (\(column.name)), UPDATE (\(column.name)) ON \(table.name) TO \(role)"
                let otherwise =
                    table.rule != nil
                    ? "declare it in the table's sync rule (read_only => ARRAY['\(column.name)'])"
                    : "leave it to the database (a default, a trigger)"
                found.append(
                    .init(
                        .warning, "unwritable_column", object,
                        "no client can write it: it is in neither the INSERT nor the UPDATE grant",
                        fix: "\(grant); or, if no client should, \(otherwise)"))
            }
        }
        return found
    }

    /// An index for every foreign key, and for a ranked table's order.
    static func indexes(_ table: SchemaFacts.Table) -> [SchemaFinding] {
        let leads = { (columns: [String]) in table.indexes.contains { $0.starts(with: columns) } }
        var found: [SchemaFinding] = []
        for key in table.foreignKeys where !leads(key.columns) {
            let columns = key.columns.joined(separator: ", ")
            found.append(
                .init(
                    .warning, "unindexed_foreign_key", "\(table.name) (\(columns))",
                    "the foreign key to \(key.target) has no index: the policies and checks that follow it, and "
                        + "every delete of a row of \(key.target), scan the table",
                    fix: "CREATE INDEX ON \(table.name) (\(columns))"))
        }
        if table.column("rank") != nil {
            // The scope ranks order rows within, as RankRewriter.parentColumn picks it.
            let scope = table.foreignKeys.first { $0.columns.count == 1 && !$0.target.hasSuffix("users") }?.columns[0]
            let order = (scope.map { [$0] } ?? []) + ["rank"]
            if !leads(order) {
                found.append(
                    .init(
                        .warning, "unindexed_rank", "\(table.name).rank",
                        "rows are read in (\(order.joined(separator: ", "))) order and no index has it, so every "
                            + "ordered read sorts all the rows of its scope",
                        fix: "CREATE INDEX ON \(table.name) (\((order + ["id"]).joined(separator: ", ")))"))
            }
        }
        return found
    }

    /// A table that grants users access to a scope records each grant and revocation.
    static func membership(_ table: SchemaFacts.Table) -> [SchemaFinding] {
        let records = table.triggers.contains { $0.recordsGrants } && table.triggers.contains { $0.recordsRevocations }
        guard !records else { return [] }
        guard let user = table.foreignKeys.first(where: { $0.target == "ferry.users" && $0.columns.count == 1 })?.columns[0],
            let scope = table.scopes.first(where: { !$0.readThroughScope })
        else { return [] }
        let isMembers = table.rule?.kind == "members"
        return [
            .init(
                .error, "membership_without_triggers", table.name,
                "\(isMembers ? "its members rule's trigger is gone" : "it is a member of \(scope.scope)'s access scope and names users (\(user))"): "
                    + "nothing records access granted and revoked through it, so a user added to or removed from a \(scope.scope) "
                    + "row never receives its rows, nor loses them, through the changes feed",
                fix: isMembers
                    ? "SELECT ferry.refresh_sync_rules();"
                    : "SELECT ferry.sync_members('\(table.name)', scope => '\(scope.column)', member => '\(user)'); or a trigger "
                        + "that calls ferry.record_access_grant and ferry.record_access_revocation")
        ]
    }

    /// A grant rule's table records access granted and revoked through it (core 0033):
    /// without its trigger, a set linked to a class, or unlinked, reaches no student's
    /// device through the changes feed, and is never revoked from it.
    static func grantTriggers(_ table: SchemaFacts.Table) -> [SchemaFinding] {
        guard table.rule?.kind == "grant", !table.triggers.contains(where: { $0.function == "ferry.rules_grant_changed" }) else {
            return []
        }
        return [
            .init(
                .error, "grant_without_triggers", table.name,
                "its grant rule's trigger is gone: nothing records access granted and revoked through it, so a member of the row "
                    + "it reaches through never receives the granted rows through the changes feed, nor loses them",
                fix: "SELECT ferry.refresh_sync_rules();")
        ]
    }
}
