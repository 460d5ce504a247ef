import Testing

/// Every changes-feed test that needs the database runs one at a time: the
/// feed's frontier is PostgreSQL's oldest running writer, cluster-wide, so a
/// test that holds a transaction open on purpose would stall the others.
@Suite(.serialized) enum ChangesSuites {}
