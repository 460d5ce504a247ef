import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The study example's classes (examples/study/migrations/0020_classes.sql,
/// core 0033's grant rule) over the wire: a student reads the sets their
/// teacher links to their class through GET, Index, the changes feed and the
/// stream `set`, writes none of them, and a stranger reads nothing; removing
/// the student, or unlinking the set, sends `revoked` entries, except to a
/// student who still reads the set another way; a student's long poll wakes
/// for a write to a linked set, and a member row wakes its student and the
/// teacher only.
@Suite struct StudyClassesTests {
    struct World {
        let server: TestServer
        let client: TestHTTPClient
        var users: [String: (id: String, token: String)] = [:]

        func auth(_ user: String) -> [(String, String)] { [("Authorization", "Bearer \(users[user]!.token)")] }

        /// Creates a row as `user`; its id and revision.
        func post(_ path: String, _ body: [String: Any], as user: String = "teacher") throws -> (id: String, revision: Int) {
            let made = try client.request("POST", path, headers: auth(user), json: body)
            try #require(made.status == 201, "\(path): \(made.text)")
            return (try #require(made.object["id"] as? String), made.object["revision"] as? Int ?? 1)
        }

        func delete(_ path: String, revision: Int, as user: String = "teacher") throws {
            let gone = try client.request("DELETE", path, headers: auth(user) + [("If-Match", "\"\(revision)\"")])
            try #require(gone.status == 200, "\(path): \(gone.text)")
        }

        func follower(_ user: String) throws -> FeedFollower {
            let feed = FeedFollower(server: server, token: users[user]!.token)
            try feed.catchUp(pastXID: try server.maxXID())
            return feed
        }

        /// Every entry of the stream `set:<id>` as `user` from the start (the
        /// frontier may wait a moment for other tests' transactions).
        func stream(_ set: String, as user: String, expecting count: Int) throws -> Set<String> {
            var seen: Set<String> = []
            var cursor: String?
            let deadline = ContinuousClock.now + .seconds(30)
            repeat {
                let page = try client.request(
                    "GET", "/v1/changes?stream=set:\(set)" + (cursor.map { "&since=\($0)" } ?? ""), headers: auth(user))
                try #require(page.status == 200, "\(page.text.prefix(300))")
                for change in page.object["changes"] as? [[String: Any]] ?? [] {
                    seen.insert("\(change["resource"] ?? "")/\((change["data"] as? [String: Any])?["id"] ?? "")")
                }
                cursor = page.object["cursor"] as? String
                if seen.count < count { usleep(20_000) }
            } while seen.count < count && ContinuousClock.now < deadline
            return seen
        }
    }

    static func world(_ configure: (inout FerryConfiguration) -> Void = { _ in }) throws -> World {
        let server = try TestServer(configure)
        var world = World(server: server, client: server.client())
        for name in ["teacher", "student", "twin", "pupil", "stranger"] { world.users[name] = try server.user(name) }
        return world
    }

    @Test func aStudentReadsTheLinkedSetEverywhereAndNothingElseAndAStrangerNothing() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let verbs = try w.post("/v1/study_sets", ["title": "Verbs"]).id
        let draft = try w.post("/v1/study_sets", ["title": "Draft"]).id
        let term = try w.post("/v1/terms", ["set_id": verbs, "word": "run"]).id
        _ = try w.post("/v1/set_collaborators", ["set_id": verbs, "user_id": w.users["twin"]!.id])
        let klass = try w.post("/v1/classes", ["name": "4B"]).id
        _ = try w.post("/v1/class_members", ["class_id": klass, "user_id": w.users["student"]!.id])
        let link = try w.post("/v1/class_sets", ["class_id": klass, "set_id": verbs]).id

        // GET and Index.
        #expect(try w.client.request("GET", "/v1/study_sets/\(verbs)", headers: w.auth("student")).status == 200)
        #expect(try w.client.request("GET", "/v1/study_sets/\(draft)", headers: w.auth("student")).status == 404)
        #expect(try w.client.request("GET", "/v1/study_sets/\(verbs)", headers: w.auth("stranger")).status == 404)
        let index = try w.client.request("GET", "/v1/study_sets", headers: w.auth("student"))
        #expect((index.object["data"] as? [[String: Any]])?.map { $0["id"] as? String } == [verbs], "\(index.text.prefix(300))")
        let terms = try w.client.request("GET", "/v1/terms?set_id=\(verbs)", headers: w.auth("student"))
        #expect((terms.object["data"] as? [[String: Any]])?.map { $0["id"] as? String } == [term], "\(terms.text.prefix(300))")
        let strangers = try w.client.request("GET", "/v1/study_sets", headers: w.auth("stranger"))
        #expect((strangers.object["data"] as? [Any])?.isEmpty == true, "\(strangers.text.prefix(300))")
        // Who collaborates stays between the set's members; the class's links are the class's.
        let members = try w.client.request("GET", "/v1/set_collaborators?set_id=\(verbs)", headers: w.auth("student"))
        #expect((members.object["data"] as? [Any])?.isEmpty == true, "\(members.text.prefix(300))")
        let links = try w.client.request("GET", "/v1/class_sets", headers: w.auth("student"))
        #expect((links.object["data"] as? [[String: Any]])?.map { $0["id"] as? String } == [link])

        // Reading is not writing: the set, its terms, the link.
        #expect(try w.client.request("PATCH", "/v1/study_sets/\(verbs)", headers: w.auth("student"), json: ["title": "mine"]).status >= 400)
        #expect(try w.client.request("POST", "/v1/terms", headers: w.auth("student"), json: ["set_id": verbs, "word": "x"]).status >= 400)
        #expect(try w.client.request("POST", "/v1/class_sets", headers: w.auth("student"), json: ["class_id": klass, "set_id": verbs]).status >= 400)
        // A teacher links only their own sets.
        let twins = try w.post("/v1/study_sets", ["title": "Twin's"], as: "twin").id
        #expect(try w.client.request("POST", "/v1/class_sets", headers: w.auth("teacher"), json: ["class_id": klass, "set_id": twins]).status >= 400)

        // The default changes feed, and the stream.
        let feed = try w.follower("student")
        #expect(feed.rows["study_sets/\(verbs)"] != nil && feed.rows["terms/\(term)"] != nil, "\(feed.rows.keys.sorted())")
        #expect(feed.rows["study_sets/\(draft)"] == nil)
        #expect(!feed.rows.keys.contains { $0.hasPrefix("set_collaborators/") })
        #expect(try w.stream(verbs, as: "student", expecting: 2) == ["study_sets/\(verbs)", "terms/\(term)"])
        let strangerFeed = try w.follower("stranger")
        #expect(strangerFeed.rows.isEmpty, "\(strangerFeed.rows.keys.sorted())")
        let strangerStream = try w.client.request("GET", "/v1/changes?stream=set:\(verbs)", headers: w.auth("stranger"))
        #expect((strangerStream.object["changes"] as? [Any])?.isEmpty == true, "\(strangerStream.text.prefix(300))")
    }

    @Test func removalAndUnlinkingRevokeUnlessTheStudentStillReadsTheSetAnotherWay() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let verbs = try w.post("/v1/study_sets", ["title": "Verbs"]).id
        let nouns = try w.post("/v1/study_sets", ["title": "Nouns"]).id
        let verb = try w.post("/v1/terms", ["set_id": verbs, "word": "run"]).id
        let noun = try w.post("/v1/terms", ["set_id": nouns, "word": "dog"]).id
        _ = try w.post("/v1/set_collaborators", ["set_id": verbs, "user_id": w.users["twin"]!.id])
        let classA = try w.post("/v1/classes", ["name": "A"]).id
        let classB = try w.post("/v1/classes", ["name": "B"]).id
        var seats: [String: (id: String, revision: Int)] = [:]
        for user in ["student", "twin", "pupil"] {
            seats[user] = try w.post("/v1/class_members", ["class_id": classA, "user_id": w.users[user]!.id])
        }
        _ = try w.post("/v1/class_members", ["class_id": classB, "user_id": w.users["pupil"]!.id])
        _ = try w.post("/v1/class_sets", ["class_id": classA, "set_id": verbs])
        _ = try w.post("/v1/class_sets", ["class_id": classB, "set_id": verbs])
        let nounsLink = try w.post("/v1/class_sets", ["class_id": classA, "set_id": nouns])

        var followers: [String: FeedFollower] = [:]
        for user in ["student", "twin", "pupil"] {
            let feed = try w.follower(user)
            #expect(feed.rows["study_sets/\(verbs)"] != nil && feed.rows["terms/\(verb)"] != nil, "\(user): \(feed.rows.keys.sorted())")
            #expect(feed.rows["study_sets/\(nouns)"] != nil && feed.rows["terms/\(noun)"] != nil, "\(user): \(feed.rows.keys.sorted())")
            followers[user] = feed
        }

        // Everyone out of class A: the student loses both sets; the twin (a
        // collaborator) keeps Verbs; the pupil (in class B too) keeps Verbs.
        for user in ["student", "twin", "pupil"] { try w.delete("/v1/class_members/\(seats[user]!.id)", revision: seats[user]!.revision) }
        for user in ["student", "twin", "pupil"] { try followers[user]!.catchUp(pastXID: try w.server.maxXID()) }
        let student = followers["student"]!
        #expect(
            student.revoked.isSuperset(of: ["study_sets/\(verbs)", "terms/\(verb)", "study_sets/\(nouns)", "terms/\(noun)"]),
            "\(student.revoked.sorted())")
        #expect(student.rows["study_sets/\(verbs)"] == nil && student.rows["terms/\(noun)"] == nil)
        for user in ["twin", "pupil"] {
            let feed = followers[user]!
            #expect(!feed.revoked.contains("study_sets/\(verbs)") && !feed.revoked.contains("terms/\(verb)"), "\(user): \(feed.revoked.sorted())")
            #expect(feed.rows["study_sets/\(verbs)"] != nil && feed.rows["terms/\(verb)"] != nil, "\(user): \(feed.rows.keys.sorted())")
            #expect(feed.revoked.isSuperset(of: ["study_sets/\(nouns)", "terms/\(noun)"]), "\(user): \(feed.revoked.sorted())")
        }
        #expect(try w.client.request("GET", "/v1/study_sets/\(verbs)", headers: w.auth("student")).status == 404)

        // Unlinking: the pupil, back in class A, gets Nouns, then loses it again.
        let pupil = followers["pupil"]!
        _ = try w.post("/v1/class_members", ["class_id": classA, "user_id": w.users["pupil"]!.id])
        pupil.revoked = []
        try pupil.catchUp(pastXID: try w.server.maxXID())
        #expect(pupil.rows["study_sets/\(nouns)"] != nil && pupil.rows["terms/\(noun)"] != nil, "\(pupil.rows.keys.sorted())")
        try w.delete("/v1/class_sets/\(nounsLink.id)", revision: nounsLink.revision)
        try pupil.catchUp(pastXID: try w.server.maxXID())
        #expect(pupil.revoked.isSuperset(of: ["study_sets/\(nouns)", "terms/\(noun)"]), "\(pupil.revoked.sorted())")
        #expect(!pupil.revoked.contains("study_sets/\(verbs)"))
        #expect(pupil.rows["study_sets/\(verbs)"] != nil)
    }

    /// A student read the set and its terms through the class, never who
    /// collaborates on it: removing them, or unlinking the set, revokes what
    /// the class gave them and no collaborator row (issue 46).
    @Test func aRevokedStudentGetsRevokedEntriesOnlyForRowsTheClassGaveThem() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let verbs = try w.post("/v1/study_sets", ["title": "Verbs"]).id
        let verb = try w.post("/v1/terms", ["set_id": verbs, "word": "run"]).id
        let collaborator = try w.post("/v1/set_collaborators", ["set_id": verbs, "user_id": w.users["twin"]!.id]).id
        let klass = try w.post("/v1/classes", ["name": "4B"]).id
        let seat = try w.post("/v1/class_members", ["class_id": klass, "user_id": w.users["student"]!.id])
        _ = try w.post("/v1/class_members", ["class_id": klass, "user_id": w.users["pupil"]!.id])
        let link = try w.post("/v1/class_sets", ["class_id": klass, "set_id": verbs])
        let student = try w.follower("student")
        let pupil = try w.follower("pupil")
        for feed in [student, pupil] {
            #expect(feed.rows["study_sets/\(verbs)"] != nil && feed.rows["terms/\(verb)"] != nil, "\(feed.rows.keys.sorted())")
            #expect(feed.rows["set_collaborators/\(collaborator)"] == nil)
        }

        // Removed from the class: the set and its term, not the collaborator row.
        try w.delete("/v1/class_members/\(seat.id)", revision: seat.revision)
        try student.catchUp(pastXID: try w.server.maxXID())
        #expect(student.revoked.isSuperset(of: ["study_sets/\(verbs)", "terms/\(verb)"]), "\(student.revoked.sorted())")
        #expect(!student.revoked.contains("set_collaborators/\(collaborator)"), "\(student.revoked.sorted())")

        // The set unlinked: the same for the pupil.
        try w.delete("/v1/class_sets/\(link.id)", revision: link.revision)
        try pupil.catchUp(pastXID: try w.server.maxXID())
        #expect(pupil.revoked.isSuperset(of: ["study_sets/\(verbs)", "terms/\(verb)"]), "\(pupil.revoked.sorted())")
        #expect(!pupil.revoked.contains("set_collaborators/\(collaborator)"), "\(pupil.revoked.sorted())")
        // The twin, a collaborator, was never revoked and still reads it all.
        let twin = try w.follower("twin")
        #expect(twin.rows["set_collaborators/\(collaborator)"] != nil && twin.rows["terms/\(verb)"] != nil)
    }

    /// Membership does not grow as the square (issue 46): a student reads the
    /// class, its links and their own member row, not their classmates'; the
    /// teacher reads every member row; a removed student gets their own row's
    /// tombstone and no revoked entry for a classmate's row.
    @Test func aStudentReadsTheirOwnMemberRowAndTheTeacherReadsThemAll() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let verbs = try w.post("/v1/study_sets", ["title": "Verbs"]).id
        let klass = try w.post("/v1/classes", ["name": "4B"]).id
        var seats: [String: (id: String, revision: Int)] = [:]
        for user in ["student", "twin", "pupil"] {
            seats[user] = try w.post("/v1/class_members", ["class_id": klass, "user_id": w.users[user]!.id])
        }
        let link = try w.post("/v1/class_sets", ["class_id": klass, "set_id": verbs]).id
        let seat = seats["student"]!.id, others = ["twin", "pupil"].map { seats[$0]!.id }

        // GET and Index.
        let index = try w.client.request("GET", "/v1/class_members", headers: w.auth("student"))
        #expect((index.object["data"] as? [[String: Any]])?.map { $0["id"] as? String } == [seat], "\(index.text.prefix(300))")
        for other in others {
            #expect(try w.client.request("GET", "/v1/class_members/\(other)", headers: w.auth("student")).status == 404)
        }
        let all = try w.client.request("GET", "/v1/class_members?class_id=\(klass)", headers: w.auth("teacher"))
        #expect(Set((all.object["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }) == Set(seats.values.map(\.id)))
        #expect(try w.client.request("GET", "/v1/classes/\(klass)", headers: w.auth("student")).status == 200)

        // The changes feed: the class, its link, the set and one member row.
        let student = try w.follower("student")
        #expect(student.rows["classes/\(klass)"] != nil && student.rows["class_sets/\(link)"] != nil, "\(student.rows.keys.sorted())")
        #expect(student.rows["study_sets/\(verbs)"] != nil)
        #expect(student.rows.keys.filter { $0.hasPrefix("class_members/") } == ["class_members/\(seat)"], "\(student.rows.keys.sorted())")
        let teacher = try w.follower("teacher")
        #expect(Set(teacher.rows.keys.filter { $0.hasPrefix("class_members/") }) == Set(seats.values.map { "class_members/\($0.id)" }))

        // Removed: the class, its link and the set are revoked; the student's own
        // row comes as its tombstone; a classmate's row, never theirs, is not named.
        try w.delete("/v1/class_members/\(seat)", revision: seats["student"]!.revision)
        try student.catchUp(pastXID: try w.server.maxXID())
        #expect(student.revoked.isSuperset(of: ["classes/\(klass)", "class_sets/\(link)", "study_sets/\(verbs)"]), "\(student.revoked.sorted())")
        #expect(student.revoked.filter { $0.hasPrefix("class_members/") }.isEmpty, "\(student.revoked.sorted())")
        #expect(student.rows["class_members/\(seat)"]?["is_deleted"] as? Bool == true, "\(student.rows.keys.sorted())")
    }

    @Test func aStudentsLongPollWakesForAWriteToALinkedSet() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let verbs = try w.post("/v1/study_sets", ["title": "Verbs"]).id
        let klass = try w.post("/v1/classes", ["name": "4B"]).id
        _ = try w.post("/v1/class_members", ["class_id": klass, "user_id": w.users["student"]!.id])
        _ = try w.post("/v1/class_sets", ["class_id": klass, "set_id": verbs])
        let feed = try w.follower("student")
        #expect(feed.rows["study_sets/\(verbs)"] != nil)
        let poll = PendingRequest(port: w.server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: w.users["student"]!.token)
        try w.server.waitForWaiters(1)
        // The teacher's write names the teacher; the student is found through the set they read through the class.
        let term = try w.server.createTerm(in: verbs, word: "run", token: w.users["teacher"]!.token)
        let response = try poll.response()
        #expect(changedIDs(response.object, "terms") == [term], "\(response.text.prefix(300))")
        #expect(Date().timeIntervalSince(poll.started) < 50)

        // A waiter on the set's stream wakes too.
        var cursor = ""
        try waitUntil("the stream to hold the term", within: 30) {
            let page = try w.client.request("GET", "/v1/changes?stream=set:\(verbs)", headers: w.auth("student"))
            cursor = page.object["cursor"] as? String ?? ""
            return changedIDs(page.object, "terms") == [term]
        }
        let streamPoll = PendingRequest(
            port: w.server.port, "/v1/changes?stream=set:\(verbs)&since=\(cursor)&wait=60", token: w.users["student"]!.token)
        try w.server.waitForWaiters(1)
        let second = try w.server.createTerm(in: verbs, word: "walk", token: w.users["teacher"]!.token)
        let streamed = try streamPoll.response()
        #expect(changedIDs(streamed.object, "terms") == [second], "\(streamed.text.prefix(300))")
        #expect(Date().timeIntervalSince(streamPoll.started) < 50)
    }

    /// A member row is read by its student and the class's teacher only
    /// (core's private members): adding or removing a student wakes those two,
    /// not every classmate waiting (issue 46). The student still gets the
    /// class's rows on joining, and their revocations on leaving.
    @Test func aMemberRowWakesItsStudentAndTheTeacherNotTheirClassmates() throws {
        // Long enough that the classmates' polls outlast the test on a loaded machine.
        var w = try Self.world { $0.live.maxWaitSeconds = 600 }
        defer { w.server.stop() }
        let classmates = (1...6).map { "classmate\($0)" }
        for name in classmates { w.users[name] = try w.server.user(name) }
        let verbs = try w.post("/v1/study_sets", ["title": "Verbs"]).id
        let klass = try w.post("/v1/classes", ["name": "4B"]).id
        for name in classmates { _ = try w.post("/v1/class_members", ["class_id": klass, "user_id": w.users[name]!.id]) }
        let link = try w.post("/v1/class_sets", ["class_id": klass, "set_id": verbs]).id
        let live = w.server.app.live
        let world = w

        /// A long poll of `user` from where their feed is now.
        func poll(_ user: String) throws -> PendingRequest {
            let feed = try world.follower(user)
            return PendingRequest(
                port: world.server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=600", token: world.users[user]!.token, timeout: 700)
        }
        /// The "resource/id" of an answer's revoked entries.
        func revoked(_ response: TestHTTPClient.Response) -> Set<String> {
            Set(
                (response.object["changes"] as? [[String: Any]] ?? []).compactMap { change in
                    guard let data = change["data"] as? [String: Any], data["revoked"] as? Bool == true else { return nil }
                    return "\(change["resource"] ?? "")/\(data["id"] ?? "")"
                })
        }

        var classmatePolls: [PendingRequest] = []
        for name in classmates { classmatePolls.append(try poll(name)) }
        var student = try poll("student"), teacher = try poll("teacher")
        try w.server.waitForWaiters(classmates.count + 2)

        // Joining: the student and the teacher wake; the classmates do not.
        var wakes = live.wakes, holds = live.holds
        let seat = try w.post("/v1/class_members", ["class_id": klass, "user_id": w.users["student"]!.id])
        let joined = try student.response()
        #expect(changedIDs(joined.object, "study_sets") == [verbs], "\(joined.text.prefix(400))")
        #expect(changedIDs(joined.object, "classes") == [klass] && changedIDs(joined.object, "class_members") == [seat.id])
        #expect(changedIDs(try teacher.response().object, "class_members") == [seat.id])
        try w.server.waitForWaiters(classmates.count)
        #expect(live.wakes - wakes == 2 + (live.holds - holds), "woken \(live.wakes - wakes), held \(live.holds - holds)")
        #expect(!classmatePolls.contains { $0.isAnswered })

        // Leaving: the same two, and the student's answer revokes what the class gave.
        student = try poll("student")
        teacher = try poll("teacher")
        try w.server.waitForWaiters(classmates.count + 2)
        wakes = live.wakes
        holds = live.holds
        try w.delete("/v1/class_members/\(seat.id)", revision: seat.revision)
        let left = try student.response()
        #expect(
            revoked(left).isSuperset(of: ["classes/\(klass)", "class_sets/\(link)", "study_sets/\(verbs)"]), "\(left.text.prefix(400))")
        #expect(changedIDs(try teacher.response().object, "class_members") == [seat.id])
        try w.server.waitForWaiters(classmates.count)
        #expect(live.wakes - wakes == 2 + (live.holds - holds), "woken \(live.wakes - wakes), held \(live.holds - holds)")
        #expect(!classmatePolls.contains { $0.isAnswered })
    }
}
