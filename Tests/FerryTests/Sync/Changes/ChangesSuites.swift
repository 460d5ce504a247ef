import Testing

/// Every changes-feed test that needs the database runs one at a time. Since
/// core 0023 a test's open transaction holds only its own scratch database's
/// feed; they stay serialized for their timing on a loaded machine.
@Suite(.serialized) enum ChangesSuites {}
