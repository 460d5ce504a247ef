import Testing
@testable import FerryMemcached

@Test func libmemcachedLinks() {
    #expect(libmemcachedVersion.split(separator: ".").count >= 2)
}
