/// The findings of rows that leak past a table's sync rule: a policy beside the rule's,
/// a grant beyond it, Row Level Security that does not apply to the serve role, ids a
/// device cannot make offline, and views and functions that read synced rows as their
/// owner. Each was found missed by `ferry check` (issue 48) and confirmed over HTTP.
extension SchemaCheck {
    /// What every policy of the table admits, beside what its rule generated.
    static func policies(_ table: SchemaFacts.Table) -> [SchemaFinding] {
        var found: [SchemaFinding] = []
        if let rule = table.rule {
            let generated = Set(rule.policies)
            for name in rule.policies where !table.policies.contains(where: { $0.name == name }) {
                found.append(
                    .init(
                        .error, "rule_policy_missing", "\(table.name) policy \(name)",
                        "the table's \(rule.kind) rule generated it and it was dropped: the rule no longer says who reads "
                            + "and writes the table",
                        fix: "SELECT ferry.refresh_sync_rules(); as the owner role (database.migration_url): it puts back what the rule generates"
                    ))
            }
            for policy in table.policies where !generated.contains(policy.name) {
                let object = "\(table.name) policy \(policy.name)"
                if policy.permissive {
                    found.append(
                        .init(
                            .error, "foreign_policy", object,
                            "its \(rule.kind) rule did not generate it, and permissive policies are OR-ed: every row it admits"
                                + "\(opensEveryRow(policy) ? " (USING (true): all of them)" : "") is \(verb(policy.command)) by "
                                + "every user, whatever the rule says",
                            fix: "DROP POLICY \(policy.name) ON \(table.name); share rows through a rule instead (ferry.sync_members, "
                                + "or ferry.sync_public for rows everyone reads), or drop the rule (ferry.drop_sync_rules) and write every policy by hand"
                        ))
                } else {
                    found.append(
                        .init(
                            .warning, "foreign_policy", object,
                            "its \(rule.kind) rule did not generate it: a restrictive policy narrows the rule, so a row the rule "
                                + "shares can vanish from a device with no revocation in the changes feed",
                            fix: "DROP POLICY \(policy.name) ON \(table.name), and say who reads the table in its rule"))
                }
            }
        }
        for policy in table.policies where policy.permissive && opensEveryRow(policy) {
            // A rule's foreign policies are reported above; this is a hand-written table's,
            // or a generated policy altered by hand.
            guard table.rule.map({ Set($0.policies).contains(policy.name) }) ?? true else { continue }
            found.append(
                .init(
                    .error, "always_true_policy", "\(table.name) policy \(policy.name)",
                    "it admits every row (\(policy.using != nil ? "USING" : "WITH CHECK") (true)), so every row is "
                        + "\(verb(policy.command)) by every user",
                    fix: table.rule == nil
                        ? "give the policy a test of the user (… = ferry.current_user_id()), or give the table a sync rule"
                        : "SELECT ferry.refresh_sync_rules(); as the owner role: it generates the rule's policy again"))
        }
        return found
    }

    /// Whether the policy admits every row its command touches.
    static func opensEveryRow(_ policy: SchemaFacts.Policy) -> Bool {
        policy.using == "true" || (policy.using == nil && policy.check == "true")
    }

    private static func verb(_ command: String) -> String {
        switch command {
        case "SELECT": "readable"
        case "INSERT": "creatable"
        case "UPDATE": "writable"
        case "DELETE": "deletable"
        default: "readable and writable"
        }
    }

    /// Privileges of the serve role beyond what the table's rule grants, and those
    /// Ferry never uses on any synced table.
    static func grants(_ table: SchemaFacts.Table, role: String) -> [SchemaFinding] {
        var found: [SchemaFinding] = []
        for privilege in table.extraPrivileges {
            let why: String
            switch privilege {
            case "DELETE":
                why =
                    "Ferry never deletes as the serve role (a delete is UPDATE … SET is_deleted = true), and with DELETE a "
                    + "session that sets ferry.purging removes rows with no tombstone, so every device that holds them keeps them forever"
            case "TRUNCATE":
                why = "TRUNCATE ignores Row Level Security: one statement removes every user's rows, with no tombstones"
            default:
                why = "it may add triggers to the table, which run with its privileges on every user's writes"
            }
            found.append(
                .init(
                    .error, "grant_beyond_rule", table.name, "the serve role \(role) holds \(privilege) on it: \(why)",
                    fix: "REVOKE \(privilege) ON \(table.name) FROM \(role)"))
        }
        guard let rule = table.rule else { return found }
        let kept: Set<String> = ["revision", "last_modified"]
        let readOnly = Set(rule.readOnly)
        let fixedNames = Set(rule.fixed + rule.links + [rule.column, "id"] + (rule.memberColumn.map { [$0] } ?? []))
        for column in table.columns {
            let writable = !kept.contains(column.name) && !column.generated && !readOnly.contains(column.name)
            let insertable = writable && column.name != "is_deleted"
            let updatable = writable && !fixedNames.contains(column.name)
            var beyond: [String] = []
            if column.insertable, !insertable { beyond.append("INSERT") }
            if column.updatable, !updatable { beyond.append("UPDATE") }
            guard !beyond.isEmpty else { continue }
            let why: String
            if beyond.contains("UPDATE"), column.name == rule.column || column.name == rule.memberColumn {
                why =
                    rule.kind == "child"
                    ? "a user who may write a row can move it under another parent, into scopes they do not own"
                    : "it names who the row belongs to: a user who may write a row can take it over, or give it away, "
                        + "and its owner loses it"
            } else if fixedNames.contains(column.name), beyond == ["UPDATE"] {
                why = "the rule fixes it at creation, and a client may change it"
            } else {
                why = "the rule keeps it from clients (read_only, or Ferry's own), and a client may set it"
            }
            let privileges = beyond.map { "\($0) (\(column.name))" }.joined(separator: ", ")
            found.append(
                .init(
                    .error, "grant_beyond_rule", "\(table.name).\(column.name)",
                    "the serve role \(role) holds \(privileges), which the table's \(rule.kind) rule does not grant: \(why)",
                    fix: "REVOKE \(privileges) ON \(table.name) FROM \(role); or SELECT ferry.refresh_sync_rules(); as the owner "
                        + "role, which grants what the rule says and nothing more"))
        }
        return found
    }

    /// Row Level Security that does not apply to the role that serves requests.
    static func servedPastPolicies(_ table: SchemaFacts.Table, role: String) -> [SchemaFinding] {
        guard table.servedPastRowLevelSecurity, table.rowLevelSecurity else { return [] }
        return [
            .init(
                .error, "row_level_security_bypassed", table.name,
                "the serve role \(role) owns it, or is a superuser or BYPASSRLS, so Row Level Security does not apply to it "
                    + "and every user reads and writes every row",
                fix: "serve as a role that owns nothing (database.url: ferry_app), and run migrations as the owner "
                    + "(database.migration_url); or ALTER TABLE \(table.name) FORCE ROW LEVEL SECURITY")
        ]
    }

    /// Ids a device cannot make offline, on a table a rule serves to many users.
    static func offlineIds(_ table: SchemaFacts.Table) -> [SchemaFinding] {
        guard table.rule != nil, let id = table.column("id"), table.primaryKey == ["id"] else { return [] }
        let integer = ["smallint", "integer", "bigint"].contains(id.baseType)
        let serverMade = id.defaultExpression.map { id.baseType != "uuid" && !$0.isEmpty } ?? false
        guard integer || serverMade else { return [] }
        let source = id.defaultExpression.map { "its ids come from the server (DEFAULT \($0))" } ?? "its ids are \(id.type)s"
        return [
            .init(
                .error, "offline_unsafe_id", "\(table.name).id",
                "\(source): a device that creates a row offline must make its id, and ids two devices make "
                    + "collide across users\(id.defaultExpression?.contains("nextval") == true ? "; and a create that leaves the id to the sequence fails, since the serve role may not use the sequence" : "")",
                // An identity column has no default to drop, and cannot change type while it is one:
                // its identity goes first, in a statement of its own (PostgreSQL changes types
                // before it drops an identity within one ALTER TABLE).
                fix: "make id a uuid that clients create, in a new migration: ALTER TABLE \(table.name) "
                    + (id.defaultExpression == "GENERATED AS IDENTITY"
                        ? "ALTER COLUMN id DROP IDENTITY; ALTER TABLE \(table.name) " : "ALTER COLUMN id DROP DEFAULT, ")
                    + "ALTER COLUMN id TYPE uuid USING gen_random_uuid(), ALTER COLUMN id SET DEFAULT gen_random_uuid() "
                    + "(with the columns that reference it)")
        ]
    }

    /// Views and functions that return synced rows past Row Level Security.
    static func exposures(_ facts: SchemaFacts) -> [SchemaFinding] {
        facts.exposures.map { exposure in
            let tables = exposure.reads.joined(separator: ", ")
            switch exposure.kind {
            case "function":
                return .init(
                    .error, "function_bypasses_row_level_security", exposure.name,
                    "it is SECURITY DEFINER, the serve role \(facts.role) may execute it, and it reads \(tables) as its owner, "
                        + "past Row Level Security: it returns every user's rows",
                    fix: "ALTER FUNCTION \(exposure.name) SECURITY INVOKER; or REVOKE EXECUTE ON FUNCTION \(exposure.name) "
                        + "FROM PUBLIC, \(facts.role)")
            case "materialized view":
                return .init(
                    .error, "view_bypasses_row_level_security", exposure.name,
                    "it is a materialized view of \(tables), filled past Row Level Security, and the serve role "
                        + "\(facts.role) may read it: it holds every user's rows",
                    fix: "REVOKE SELECT ON \(exposure.name) FROM PUBLIC, \(facts.role)")
            default:
                return .init(
                    .error, "view_bypasses_row_level_security", exposure.name,
                    "the serve role \(facts.role) may read it, and it reads \(tables) as its owner, past Row Level Security "
                        + "(it is not security_invoker): it returns every user's rows",
                    fix: "ALTER VIEW \(exposure.name) SET (security_invoker = true); or REVOKE SELECT ON \(exposure.name) "
                        + "FROM PUBLIC, \(facts.role)")
            }
        }
    }
}
