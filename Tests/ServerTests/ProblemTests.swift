import Foundation
import Session
import Testing
@testable import Server

/// Problems are written from typed fields: the row of the error table a problem names is a
/// `SessionError.Name` (or the server's own `unauthorized`), and what it carries — title, name,
/// status, DOMException, CTAP status, WebDriver's error — follows from it.
@Suite struct ProblemTests {
    func fields(_ problem: Problem) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(problem.response.body)) as? [String: Any])
    }

    @Test func aRequestLayerErrorIsItsRowWithTheRowsStatusDOMExceptionAndCTAPStatus() throws {
        for name in SessionError.Name.allCases {
            let problem = Problem(SessionError(name, "what happened"))
            #expect(problem.name == .row(name))
            let json = try fields(problem)
            #expect(json["title"] as? String == name.rawValue && json["name"] as? String == name.rawValue, "\(name)")
            #expect(json["status"] as? Int == Problem.status(of: name) && problem.response.status == Problem.status(of: name), "\(name)")
            #expect(json["domException"] as? String == name.domException, "\(name)")
            #expect((json["ctapStatus"] as? Int).map(UInt8.init) == name.ctapStatus, "\(name)")
            #expect(json["detail"] as? String == "what happened" && json["type"] as? String == "about:blank")
            #expect(problem.response.contentType == .problem)
        }
    }

    @Test func whatTheServerFindsNamesARowOrUnauthorized() throws {
        let busy = try fields(Problem(409, .usage, "pending already", domException: "OperationError"))
        #expect(busy["name"] as? String == "usage" && busy["status"] as? Int == 409 && busy["domException"] as? String == "OperationError")
        #expect(busy["ctapStatus"] == nil)
        #expect(try fields(Problem.input("x"))["name"] as? String == "badInput")
        #expect(try fields(Problem.notFound("x", name: .notHandled))["name"] as? String == "notHandled")
        let unauthorized = Problem.unauthorized("no token")
        #expect(unauthorized.name == .unauthorized && unauthorized.status == 401)
        #expect(try fields(unauthorized)["name"] as? String == "unauthorized")
    }

    @Test func aWebDriverRouteAddsWebDriversErrorToTheSameProblem() throws {
        var problem = Problem(SessionError(.canceled, "the person canceled"))
        problem.webDriverError = "unknown error"
        let json = try fields(problem)
        #expect(json["name"] as? String == "canceled" && json["status"] as? Int == 422)
        let value = try #require(json["value"] as? [String: Any])
        #expect(value["error"] as? String == "unknown error" && value["message"] as? String == "the person canceled")
    }

    @Test func everyEventKindIsNamedAsTheStreamSendsIt() {
        #expect(AccountEvents.Kind.allCases.map(\.rawValue) == ["credentialAdded", "credentialAsserted", "credentialUpdated", "credentialDeleted",
                                                               "syncLanded", "syncArrived"])
    }

    @Test func warningsAreAMemberOfAJSONObjectAnswerAndOfNoOtherAnswer() throws {
        func body(_ answer: HTTPResponse) -> String { String(decoding: answer.body, as: UTF8.self) }
        let status = HTTPResponse(status: 200, contentType: .json, body: Array(#"{"devices":[]}"#.utf8))
        #expect(body(status.warning(["the account store at \"x\" is not used"])) == #"{"devices":[],"warnings":["the account store at \"x\" is not used"]}"#)
        #expect(body(HTTPResponse(status: 200, contentType: .json, body: Array("{ }\n".utf8)).warning(["a", "b"])) == "{ \"warnings\":[\"a\",\"b\"]}\n")
        #expect(body(status.warning([])) == #"{"devices":[]}"#)
        // A problem, a list, no content: as they are.
        let problem = Problem(409, .vaultBusy, "busy").response
        #expect(problem.warning(["a"]).body == problem.body)
        let list = HTTPResponse(status: 200, contentType: .json, body: Array("[1]".utf8))
        #expect(list.warning(["a"]).body == list.body)
        #expect(HTTPResponse.noContent.warning(["a"]).body.isEmpty)
    }
}
