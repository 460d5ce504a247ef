/// One fuzz target: the name `run.sh` and the corpus directory use, and the check
/// it runs on each input.
struct FuzzTarget: Sendable {
    let name: String
    /// Checks one input; a broken property traps (see ``require(_:_:file:line:)``).
    let run: @Sendable (UnsafeRawBufferPointer) -> Void

    /// Every target, in the order `bench/fuzz/run.sh` runs them.
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "http-request", run: RequestSplitsFuzz.run),
        FuzzTarget(name: "chunked", run: ChunkedBodyFuzz.run),
        FuzzTarget(name: "query", run: QueryFuzz.run),
        FuzzTarget(name: "json-body", run: JSONBodyFuzz.run),
        FuzzTarget(name: "rank", run: RankFuzz.run),
        FuzzTarget(name: "paging-token", run: PagingTokenFuzz.run),
        FuzzTarget(name: "change-cursor", run: ChangeCursorFuzz.run),
        FuzzTarget(name: "bearer-token", run: BearerTokenFuzz.run),
        FuzzTarget(name: "jwt", run: JWTFuzz.run),
    ]

    /// The target called `name`, if there is one.
    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}
