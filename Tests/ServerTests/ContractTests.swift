import Foundation
import Testing
@testable import Server

/// The contract is stated twice — the routes with their body types, and `openapi.json` — and
/// held together here member by member, so that neither changes alone: every route is an
/// operation of the document with its method and path (and every operation a route), and every
/// body type's members are its schema's properties, with the same names, the same required
/// ones, the same JSON types (and names, for a member that is one of a set), nested objects and
/// lists the same way down, and unknown members refused exactly where the schema refuses them.
@Suite struct ContractTests {
    let document: [String: Any]
    let service = AccountService(token: "t", scratch: "/tmp")

    init() throws {
        document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes)) as? [String: Any])
    }

    @Test func everyRouteIsAnOperationWithItsMethodAndPathAndEveryOperationARoute() throws {
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
        let served = Set(service.routeBodies.keys)
        #expect(served.subtracting(documented).isEmpty, "routes the document does not have: \(served.subtracting(documented).sorted())")
        #expect(documented.subtracting(served).isEmpty, "operations no route serves: \(documented.subtracting(served).sorted())")
    }

    @Test func everyBodyTypeHasItsSchemasMembersNamesRequiredOnesAndTypes() throws {
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var differences = [String]()
        for (route, body) in service.routeBodies.sorted(by: { $0.key < $1.key }) {
            let (method, path) = (String(route.split(separator: " ")[0]), String(route.split(separator: " ")[1]))
            guard let operation = paths[path]?[method.lowercased()] as? [String: Any] else { continue }  // the test above says so
            let given = ((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"] as? [String: Any]
            let schema = given?["schema"] as? [String: Any]
            let shape = body.map { BodyShape.of($0) }
            switch (shape, schema) {
            case (nil, nil): continue
            // A route that refuses every member takes no body: the document gives it none.
            case (let shape?, nil) where shape.members.isEmpty && !shape.takesOtherMembers: continue
            case (nil, _?): differences.append("\(route): the document has a body, the route reads none")
            case (let shape?, nil): differences.append("\(route): the route takes \(shape.type), the document has no body")
            case (let shape?, let schema?):
                if let reference = schema["$ref"] as? String, reference.split(separator: "/").last.map(String.init) != shape.type {
                    differences.append("\(route): the route takes \(shape.type), the document \(reference)")
                }
                differences += compare(shape, resolved(schema), at: "\(route) \(shape.type)")
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }

    /// A body type's members against an object schema's properties.
    func compare(_ shape: BodyShape, _ schema: [String: Any], at place: String) -> [String] {
        var differences = [String]()
        let properties = schema["properties"] as? [String: Any] ?? [:]
        let required = Set(schema["required"] as? [String] ?? [])
        if types(schema) != ["object"] { differences.append("\(place): the document's schema is not an object") }
        let names = Set(shape.members.map(\.name))
        for name in names.subtracting(properties.keys).sorted() { differences.append("\(place).\(name): a member the document does not have") }
        for name in Set(properties.keys).subtracting(names).sorted() { differences.append("\(place).\(name): a property the type does not have") }
        for name in required.subtracting(names).sorted() { differences.append("\(place).\(name): required by the document, not a member") }
        if (schema["additionalProperties"] as? Bool ?? true) != shape.takesOtherMembers {
            differences.append("\(place): the type \(shape.takesOtherMembers ? "passes over" : "refuses") other members, the document says otherwise")
        }
        for member in shape.members {
            guard let property = properties[member.name] as? [String: Any] else { continue }
            if member.required != required.contains(member.name) {
                let (type, documented) = (member.required ? "required" : "optional", member.required ? "optional" : "required")
                differences.append("\(place).\(member.name): \(type) in the type, \(documented) in the document")
            }
            differences += compare(member.value, resolved(property), at: "\(place).\(member.name)")
        }
        return differences
    }

    /// A member's value against a property's schema: JSON types, names, and what is inside.
    func compare(_ value: BodyShape.Value, _ schema: [String: Any], at place: String) -> [String] {
        switch value {
        case .scalar(let jsonTypes, let names):
            var differences = [String]()
            if types(schema) != jsonTypes { differences.append("\(place): \(jsonTypes.sorted()) in the type, \(types(schema).sorted()) in the document") }
            let listed = (schema["enum"] as? [Any])?.compactMap { $0 as? String }
            if names != listed { differences.append("\(place): names \(names ?? []) in the type, \(listed ?? []) in the document") }
            return differences
        case .list(let element):
            guard types(schema) == ["array"], let items = schema["items"] as? [String: Any] else { return ["\(place): a list in the type, not in the document"] }
            return compare(element, resolved(items), at: "\(place)[]")
        case .object(let shape):
            return compare(shape, schema, at: place)
        }
    }

    /// The JSON types a schema allows: its `type`, its `enum`'s values', its `oneOf`'s and
    /// `anyOf`'s together.
    func types(_ given: [String: Any]) -> Set<String> {
        let schema = resolved(given)
        var out = Set<String>()
        if let type = schema["type"] as? String { out.insert(type) }
        if let list = schema["type"] as? [String] { out.formUnion(list) }
        for value in schema["enum"] as? [Any] ?? [] { out.insert(value is String ? "string" : value is Bool ? "boolean" : "number") }
        for part in (schema["oneOf"] as? [[String: Any]] ?? []) + (schema["anyOf"] as? [[String: Any]] ?? []) { out.formUnion(types(part)) }
        return out
    }

    /// A schema with its `$ref` followed (to `#/components/schemas/NAME`).
    func resolved(_ schema: [String: Any]) -> [String: Any] {
        guard let reference = schema["$ref"] as? String, let name = reference.split(separator: "/").last,
              let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any],
              let target = schemas[String(name)] as? [String: Any] else { return schema }
        return resolved(target)
    }
}
