"""authctl as a library of another package: a throw-away package that depends on this one by
version, as a user's would (`.package(url:from:)` on a git repository of this tree, tagged with the
version `authctl --version` names), builds and runs the README's Keychain example with `import Keychain` alone (py_webauthn judges
what it prints), builds and runs every program of docs/library.md, and cannot name what is
`package` in Keychain. Its sources are in Tests/dependent/Sources; the manifest is written here.
The dependent's debug build of Keychain and what it needs takes about 25 s on two cores, the
reference's programs (and the Scenarios module they add) about 20 s more. SwiftPM refuses a
dependency whose targets carry unsafe flags; a test shows this check says no to such a manifest."""
import json
import re
import shutil
import subprocess

import pytest
from webauthn import verify_authentication_response, verify_registration_response

from conftest import BIN, ROOT, b64url, own_environment, unb64url

ORIGIN = "https://login.example.com"
RP_ID = "example.com"
CREATION_CHALLENGE, REQUEST_CHALLENGE = b"a registration challenge", b"a sign-in challenge"
MANIFEST = """// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "dependent",
    dependencies: [.package(url: {url}, from: {version})],
    targets: [
        .executableTarget(name: "KeychainExample", dependencies: [.product(name: "Keychain", package: {identity})]),
        .executableTarget(name: "WallCheck", dependencies: [.product(name: "Keychain", package: {identity})]),
{examples}    ]
)
"""
PRODUCTS = ("Keychain", "VirtualAuthenticator", "Scenarios", "Session")


def library_examples():
    """The complete programs of docs/library.md: its swift blocks that begin with an import."""
    text = (ROOT / "docs" / "library.md").read_text()
    return [block for block in re.findall(r"```swift\n(.*?)```", text, re.S) if block.startswith("import ")]


def version():
    return json.loads(subprocess.run([BIN, "--json", "version"], capture_output=True, text=True, check=True).stdout)["version"]


def tagged_repository(where, tweak=None):
    """A git repository of this tree as it stands (tracked files and untracked ones git does not
    ignore), committed once and tagged with the version; `tweak(path)` may change it first."""
    where.mkdir(parents=True)
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / name)
    if tweak:
        tweak(where)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "authctl"], ["tag", version()]):
        subprocess.run(git + args, cwd=where, check=True, capture_output=True)
    return where


def dependent_package(base, repository, examples=""):
    package = base / "package"
    shutil.copytree(ROOT / "Tests" / "dependent" / "Sources", package / "Sources")
    (package / "Package.swift").write_text(MANIFEST.format(url=json.dumps(f"file://{repository}"), version=json.dumps(version()),
                                                           identity=json.dumps("authctl"), examples=examples))
    return package


@pytest.fixture(scope="module")
def dependent(tmp_path_factory):
    """The dependent package, with its dependency graph built (the example's product)."""
    base = tmp_path_factory.mktemp("dependent")
    repository = tagged_repository(base / "authctl")
    identity = json.dumps("authctl")
    examples = ""
    programs = {}
    for number, program in enumerate(library_examples(), 1):
        programs[f"DocExample{number}/main.swift"] = program
        products = ", ".join(f'.product(name: "{p}", package: {identity})' for p in PRODUCTS)
        examples += f'        .executableTarget(name: "DocExample{number}", dependencies: [{products}]),\n'
    package = dependent_package(base, repository, examples)
    for name, program in programs.items():
        (package / "Sources" / name).parent.mkdir()
        (package / "Sources" / name).write_text(program)
    env = own_environment(base)
    build = subprocess.run(["swift", "build", "--product", "KeychainExample"], cwd=package, env=env,
                           capture_output=True, text=True, timeout=1800)
    assert build.returncode == 0, build.stdout + build.stderr
    assert "warning:" not in build.stdout + build.stderr
    return package, env


def test_the_dependency_is_resolved_by_version(dependent):
    package, _ = dependent
    pins = json.loads((package / "Package.resolved").read_text())["pins"]
    assert [(pin["identity"], pin["state"].get("version")) for pin in pins] == [("authctl", version())]


def test_a_manifest_with_unsafe_flags_cannot_be_depended_on(tmp_path):
    """What the check above would say if the manifest regained an unsafe flag: SwiftPM refuses the
    dependency while planning the build, before compiling anything."""
    def unsafe(where):
        manifest = (where / "Package.swift").read_text()
        found = re.search(r'\.target\(name: "KeyVault", dependencies: \[[^\]]*\]\)', manifest)
        assert found, "no KeyVault target in Package.swift"
        plain = found.group(0)
        (where / "Package.swift").write_text(manifest.replace(
            plain, plain[:-1] + ', swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))])'))
    package = dependent_package(tmp_path, tagged_repository(tmp_path / "authctl", unsafe))
    build = subprocess.run(["swift", "build", "--product", "KeychainExample"], cwd=package, env=own_environment(tmp_path),
                           capture_output=True, text=True, timeout=1800)
    assert build.returncode != 0
    assert "the target 'KeyVault' in product 'Keychain' contains unsafe build flags" in build.stdout + build.stderr


def lines(output):
    steps = {}
    for line in output.splitlines():
        step, _, value = line.partition(" ")
        steps[step] = value
    return steps


def test_the_readme_example_runs_in_a_package_that_imports_only_keychain(dependent, tmp_path):
    package, env = dependent
    creation = {"rp": {"id": RP_ID, "name": "Example"},
                "user": {"id": b64url(b"user-1"), "name": "alice@example.com", "displayName": "Alice"},
                "challenge": b64url(CREATION_CHALLENGE), "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
                "authenticatorSelection": {"residentKey": "required", "userVerification": "preferred"}}
    request = {"challenge": b64url(REQUEST_CHALLENGE), "rpId": RP_ID, "userVerification": "preferred"}
    (tmp_path / "creation.json").write_text(json.dumps(creation))
    (tmp_path / "request.json").write_text(json.dumps(request))
    (tmp_path / "vaults").mkdir()
    run = subprocess.run([str(package / ".build" / "debug" / "KeychainExample"), str(tmp_path / "vaults"), ORIGIN,
                          str(tmp_path / "creation.json"), str(tmp_path / "request.json")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    steps = lines(run.stdout)
    registration, assertion = json.loads(steps["register"]), json.loads(steps["sign"])
    assert registration["type"] == assertion["type"] == "public-key"
    assert assertion["id"] == registration["id"]
    # The RP's verifier accepts both, with the PIN checked (UV), as from the command line.
    verified = verify_registration_response(credential=registration, expected_challenge=CREATION_CHALLENGE,
                                            expected_rp_id=RP_ID, expected_origin=ORIGIN, require_user_verification=True)
    signed = verify_authentication_response(credential=assertion, expected_challenge=REQUEST_CHALLENGE, expected_rp_id=RP_ID,
                                            expected_origin=ORIGIN, credential_public_key=verified.credential_public_key,
                                            credential_current_sign_count=0, require_user_verification=True)
    assert signed.new_sign_count == 0
    assert steps["passkeys"] == "1"
    # DeviceError and AuthenticatorError.Code named through `import Keychain`.
    assert steps["cancel"] == "canceled NotAllowedError"
    # The second device signs with the first one's passkey only once it has synced (5 s of a
    # virtual clock), and the RP accepts that signature under the key it registered.
    assert steps["laptop-early"] == "notHandled"
    phone, laptop = json.loads(steps["phone-register"]), json.loads(steps["laptop"])
    assert laptop["type"] == "public-key" and laptop["id"] == phone["id"]
    phone_key = verify_registration_response(credential=phone, expected_challenge=CREATION_CHALLENGE, expected_rp_id=RP_ID,
                                             expected_origin=ORIGIN).credential_public_key
    verify_authentication_response(credential=laptop, expected_challenge=REQUEST_CHALLENGE, expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=phone_key, credential_current_sign_count=0,
                                   require_user_verification=True)
    assert unb64url(laptop["response"]["userHandle"]) == b"user-1"


def test_a_dependent_cannot_name_what_keychain_keeps_package(dependent):
    package, env = dependent
    build = subprocess.run(["swift", "build", "--target", "WallCheck"], cwd=package, env=env,
                           capture_output=True, text=True, timeout=1800)
    output = build.stdout + build.stderr
    assert build.returncode != 0, output
    errors = {line.split("error: ", 1)[1] for line in output.splitlines() if "/WallCheck/main.swift:" in line and "error: " in line}
    assert errors == {"cannot find 'ProcessHardening' in scope"}, output
    # The symbol exists, and this package's own targets use it: only the wall keeps it out.
    assert "package enum ProcessHardening" in (ROOT / "Sources/Keychain/Device/ProcessHardening.swift").read_text()
    assert "ProcessHardening.apply()" in (ROOT / "Sources/authctl/main.swift").read_text()


def test_the_programs_of_the_library_reference_build_and_run(dependent):
    package, env = dependent
    examples = library_examples()
    assert len(examples) >= 4  # Keychain (one device, an account), VirtualAuthenticator, Scenarios
    for number, program in enumerate(examples, 1):
        name = f"DocExample{number}"
        build = subprocess.run(["swift", "build", "--product", name], cwd=package, env=env,
                               capture_output=True, text=True, timeout=1800)
        assert build.returncode == 0, f"{name}:\n{program}\n{build.stdout}{build.stderr}"
        assert "warning:" not in build.stdout + build.stderr, build.stdout + build.stderr
        run = subprocess.run([str(package / ".build" / "debug" / name)], cwd=package, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0 and run.stderr == "", f"{name}:\n{program}\n{run.stdout}{run.stderr}"
        assert run.stdout.strip(), name
