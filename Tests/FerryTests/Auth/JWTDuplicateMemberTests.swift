@testable import Ferry
import Foundation
import Testing

/// A member twice in a token's header or payload is refused (issue 51): two
/// parsers of one token must not read two identities.
@Suite struct JWTDuplicateMemberTests {
    let header = TestBase64URL.encode(#"{"alg":"RS256","kid":"k1"}"#)

    func refusal(header: String? = nil, payload: String) -> JWTRefusal? {
        do {
            _ = try CompactJWT("\(header.map(TestBase64URL.encode) ?? self.header).\(TestBase64URL.encode(payload)).c2ln")
            return nil
        } catch {
            return error
        }
    }

    @Test func aDuplicatedClaimIsRefusedAsMalformed() {
        let refused = refusal(payload: #"{"sub":"a","sub":"b"}"#)
        #expect(refused?.code == .tokenMalformed)
        #expect(refused.map { "\($0)".contains("sub") } == true, "the refusal names the member")
        #expect(refusal(payload: #"{"org_id":"acme","sub":"a","org_id":"evil"}"#)?.code == .tokenMalformed)
    }

    @Test func aNameSpelledWithEscapesIsTheSameName() {
        #expect(refusal(payload: #"{"sub":"a","s\u0075b":"b"}"#)?.code == .tokenMalformed)
        #expect(refusal(payload: #"{"sub":"a","\u0073ub":"b"}"#)?.code == .tokenMalformed)
    }

    @Test func duplicatesAtAnyDepthAndInTheHeaderAreRefused() {
        #expect(refusal(payload: #"{"sub":"a","org":{"id":1,"id":2}}"#)?.code == .tokenMalformed)
        #expect(refusal(payload: #"{"sub":"a","list":[{"x":1},{"x":1,"x":2}]}"#)?.code == .tokenMalformed)
        #expect(refusal(header: #"{"alg":"RS256","kid":"k1","kid":"k2"}"#, payload: #"{"sub":"a"}"#)?.code == .tokenMalformed)
        #expect(refusal(header: #"{"alg":"none","alg":"RS256"}"#, payload: #"{"sub":"a"}"#)?.code == .tokenMalformed)
    }

    @Test func theSameNameInDifferentObjectsOrAsAValueIsFine() {
        #expect(refusal(payload: #"{"sub":"sub","a":{"sub":"x"},"b":[{"sub":1},{"sub":2}],"c":"sub"}"#) == nil)
        #expect(refusal(payload: #"{"sub":"a\"b","x":"\",\"sub\":\"","y":["sub","sub"]}"#) == nil)
        #expect(refusal(payload: #"{"a":{},"b":[],"c":[{}],"sub":"a"}"#) == nil)
    }
}
