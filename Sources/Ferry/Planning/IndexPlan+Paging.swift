extension IndexPlan {
    /// The query as paging wraps it: the same filters, order, row JSON and
    /// parameters (without the limit, which paging binds itself).
    var paged: PagedIndexQuery {
        let condition = condition
        return PagedIndexQuery(
            table: resource.qualifiedName, condition: condition.sql, orderBy: orderBy(alias: "t"),
            parameters: Array(query.parameters.prefix(condition.parameterCount)),
            rowJSON: RowJSON(resource: resource).view(SQL.column("t")), rowVersion: #"t."revision""#)
    }
}
