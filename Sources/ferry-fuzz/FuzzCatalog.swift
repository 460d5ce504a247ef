import Ferry
import Foundation

/// The example schema's study sets and terms, as the introspector would describe
/// them: the columns query parsing and body checks are resolved against. Terms get
/// a column of each other kind the checks treat apart (boolean, integer, array, json).
enum FuzzCatalog {
    static let terms = resource(
        """
        {"name": "terms", "schema": "app", "unique_keys": [], "constraints": {},
         "columns": [
          {"name": "id", "type": "uuid", "nullable": false, "has_default": true, "insertable": true, "updatable": false, "references": null},
          {"name": "set_id", "type": "uuid", "nullable": false, "has_default": false, "insertable": true, "updatable": false, "references": "study_sets"},
          {"name": "word", "type": "text", "nullable": false, "has_default": true, "insertable": true, "updatable": true, "references": null},
          {"name": "tags", "type": "text[]", "nullable": true, "has_default": false, "insertable": true, "updatable": true, "references": null},
          {"name": "extra", "type": "json", "nullable": true, "has_default": false, "insertable": true, "updatable": true, "references": null},
          {"name": "starred", "type": "boolean", "nullable": false, "has_default": true, "insertable": true, "updatable": true, "references": null},
          {"name": "position", "type": "integer", "nullable": true, "has_default": false, "insertable": true, "updatable": true, "references": null},
          {"name": "rank", "type": "text", "nullable": false, "has_default": true, "insertable": true, "updatable": true, "references": null},
          {"name": "revision", "type": "bigint", "nullable": false, "has_default": true, "insertable": false, "updatable": false, "references": null},
          {"name": "last_modified", "type": "bigint", "nullable": false, "has_default": true, "insertable": false, "updatable": false, "references": null},
          {"name": "is_deleted", "type": "boolean", "nullable": false, "has_default": true, "insertable": false, "updatable": true, "references": null}
         ]}
        """)

    static let studySets = resource(
        """
        {"name": "study_sets", "schema": "app", "unique_keys": [], "constraints": {},
         "columns": [
          {"name": "id", "type": "uuid", "nullable": false, "has_default": true, "insertable": true, "updatable": false, "references": null},
          {"name": "title", "type": "text", "nullable": false, "has_default": false, "insertable": true, "updatable": true, "references": null},
          {"name": "revision", "type": "bigint", "nullable": false, "has_default": true, "insertable": false, "updatable": false, "references": null},
          {"name": "last_modified", "type": "bigint", "nullable": false, "has_default": true, "insertable": false, "updatable": false, "references": null},
          {"name": "is_deleted", "type": "boolean", "nullable": false, "has_default": true, "insertable": false, "updatable": true, "references": null}
         ]}
        """)

    static let catalog = SchemaCatalog(tables: [terms, studySets])

    private static func resource(_ json: String) -> Resource {
        do {
            return try JSONDecoder().decode(Resource.self, from: Data(json.utf8))
        } catch {
            fatalError("the fuzz catalog does not decode: \(error)")
        }
    }
}
