import Testing

/// FerryKit runs the protocol conformance suite (clients/conformance): each file is
/// what FerryKit's pure functions answer today; a change of behaviour fails here until
/// the file is regenerated, and then fails FerryWeb's run of the same file until the web
/// client changes too.
@Suite struct ConformanceTests {
    static let files = [
        RankVectors.file, RetryCases.file, MergeCases.mergeFile, MergeCases.feedFile, PlannerCases.file, SubscriptionCases.file, RestartCases.file,
    ]

    @Test(arguments: 0..<files.count)
    func committedFileMatchesFerryKit(index: Int) throws {
        let file = Self.files[index]()
        let mismatch = try file.mismatch()
        #expect(mismatch == nil, "\(mismatch ?? "")")
    }
}
