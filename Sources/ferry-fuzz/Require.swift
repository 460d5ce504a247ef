/// Stops the process when a property does not hold for an input. The trap is what
/// libFuzzer reports as a crash, saving the input; the message says which property.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    guard !condition else { return }
    fatalError("property broken: \(message())", file: file, line: line)
}
