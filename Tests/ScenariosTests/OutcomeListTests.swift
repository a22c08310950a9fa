import Testing

@testable import Scenarios

// A `holds` list checked with `passkeys!=LABEL`: looked through once, unsorted, as long as a
// device's whole list; it must say what the sorted multiset said.

@Test func aListLacksWhatIsNotInItWhateverItsLength() {
    let long = (1...1000).map { "u\($0)" }.shuffled().joined(separator: ",")
    #expect(Outcome.lacks("u1001", actual: long))
    #expect(!Outcome.lacks("u1", actual: long))
    #expect(!Outcome.lacks("u1000", actual: long))
    #expect(!Outcome.lacks("u1001,u500", actual: long))
    #expect(Outcome.lacks("u10001,u0,u", actual: long))
    // More than a few unwanted items.
    let many = (1001...1020).map { "u\($0)" }
    #expect(Outcome.lacks(many.joined(separator: ","), actual: long))
    #expect(!Outcome.lacks((many + ["u7"]).joined(separator: ","), actual: long))
    // `none` is no item, on either side; a fact the result does not have lacks everything.
    #expect(Outcome.lacks("u1", actual: "none"))
    #expect(Outcome.lacks("none", actual: long))
    #expect(Outcome.lacks("u1", actual: nil))
    // Items are whole: a prefix is not the item, an empty item is one.
    #expect(Outcome.lacks("u", actual: "u1,u2"))
    #expect(!Outcome.lacks("u2", actual: "u1,u2"))
    #expect(!Outcome.lacks("", actual: "u1,,u2"))
    #expect(Outcome.lacks("", actual: "u1,u2"))
    // Canonically equivalent labels are the same item, as string comparison says.
    #expect(!Outcome.lacks("caf\u{E9}", actual: "a,cafe\u{301}"))
    // `sync status`'s timed lists compare labels unless a time is named.
    #expect(!Outcome.lacks("u2", actual: "u1@3s,u2@5s", timed: true))
    #expect(Outcome.lacks("u2@4s", actual: "u1@3s,u2@5s", timed: true))
}

@Test func theTokenizerCopiesWordsAndLiteralsWhole() throws {
    let tokens = try Tokenizer.tokens("at 5s d1 register user caf\u{E9}\u{301} => ok key={\"a\": [1, \"}\"]} \"x y\" # comment")
    #expect(tokens.map(\.text) == ["at", "5s", "d1", "register", "user", "caf\u{E9}\u{301}", "=>", "ok", "key=", "{\"a\": [1, \"}\"]}", "x y"])
    #expect(tokens.map(\.column) == [1, 4, 7, 10, 19, 24, 30, 33, 36, 40, 56])
    #expect(tokens.map(\.kind) == [.word, .word, .word, .word, .word, .word, .word, .word, .word, .json, .string])
}
