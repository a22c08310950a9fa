"""The relying party the tests play: py_webauthn makes the options and judges the responses."""
import json

from webauthn import (generate_authentication_options, generate_registration_options, verify_authentication_response,
                      verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor,
                                      ResidentKeyRequirement, UserVerificationRequirement)

from authctl_client import unb64url

RP_ID, ORIGIN = "example.com", "https://example.com"


def registration_options(user: str = "alice", exclude=(), rp_id: str = RP_ID):
    """Creation options for a discoverable passkey with user verification required."""
    return generate_registration_options(
        rp_id=rp_id, rp_name="Example", user_name=user, user_id=user.encode(),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=unb64url(c)) for c in exclude],
        authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.REQUIRED,
                                                               user_verification=UserVerificationRequirement.REQUIRED))


def authentication_options(allow=(), rp_id: str = RP_ID, uv=UserVerificationRequirement.PREFERRED):
    """Request options: discoverable (no `allow`), else for the given credential ids."""
    return generate_authentication_options(rp_id=rp_id, user_verification=uv,
                                           allow_credentials=[PublicKeyCredentialDescriptor(id=unb64url(c)) for c in allow])


def verify_registration(response, options, origin: str = ORIGIN, rp_id: str = RP_ID):
    return verify_registration_response(credential=response, expected_challenge=options.challenge, expected_rp_id=rp_id,
                                        expected_origin=origin, require_user_verification=True)


def verify_authentication(response, options, registered, count: int = 0, origin: str = ORIGIN, rp_id: str = RP_ID,
                          require_uv: bool = False):
    return verify_authentication_response(credential=response, expected_challenge=options.challenge,
                                          expected_rp_id=rp_id, expected_origin=origin,
                                          credential_public_key=registered.credential_public_key,
                                          credential_current_sign_count=count, require_user_verification=require_uv)


def client_data(response) -> dict:
    return json.loads(unb64url(response["response"]["clientDataJSON"]))
