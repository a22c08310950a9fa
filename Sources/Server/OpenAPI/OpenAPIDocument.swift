/// The server's contract, `GET /openapi.json` (OpenAPI 3.1): every route, its parameters, its
/// request body and its answers, one operation or schema per line. It is `openapi.json` beside
/// this file, which the build embeds in the binary (Package.swift: `.embedInCode`), so that an
/// installed binary serves it with no file beside it, byte for byte as the file is.
/// `Tests/interop/test_serve_contract.py` validates the file as OpenAPI 3.1 and holds it to the
/// routes and the request bodies' types member by member; schemathesis calls every operation and
/// checks each answer against it.
enum OpenAPIDocument {
    static var bytes: [UInt8] { PackageResources.openapi_json }
}
