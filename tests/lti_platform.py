"""A simulated LMS for the LTI tests: its own keys, OIDC, NRPS and AGS over HTTP.

`SimulatedPlatform` serves, on a free local port:

- GET  /jwks                        the platform's public keys
- GET  /auth                        OIDC authorization: checks the client id and
                                    redirect URI, signs an id_token for the user
                                    in `login_hint` and the launch in
                                    `lti_message_hint`, answers with the
                                    auto-posting form (response_mode=form_post)
- POST /token                       client credentials: verifies the tool's JWT
                                    assertion with the key set fetched from the
                                    tool's /lti/jwks, issues a bearer token
- GET  /nrps/<course>               the course's members (NRPS 2.0, paged)
- GET/POST /lineitems/<course>      line items (AGS)
- POST /lineitems/<course>/<n>/scores   records a score (failures can be queued)
- GET  /course/<course>             a course page with the tool in an iframe

id_tokens carry the claim sets Canvas and Moodle send (`flavor`): role URIs,
context, resource link, launch presentation, LIS, NRPS and AGS endpoint claims.
"""

from __future__ import annotations

import html
import itertools
import json
import secrets
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
]
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
ROLES = {
    "canvas": {
        "learner": [
            LIS + "institution/person#Student",
            LIS + "membership#Learner",
            LIS + "system/person#User",
        ],
        "teacher": [
            LIS + "institution/person#Instructor",
            LIS + "membership#Instructor",
            LIS + "system/person#User",
        ],
        "ta": [LIS + "membership/Instructor#TeachingAssistant"],
        "observer": [LIS + "membership#Mentor", LIS + "system/person#User"],
    },
    "moodle": {
        "learner": [LIS + "membership#Learner"],
        "teacher": [
            LIS + "institution/person#Administrator",
            LIS + "membership#Instructor",
            LIS + "system/person#Administrator",
        ],
        "ta": [LIS + "membership/Instructor#TeachingAssistant"],
        "observer": [LIS + "membership#Mentor"],
    },
}


def rsa_key():
    """A fresh RSA private key."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def private_pem(key) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@dataclass
class Person:
    """A user of the platform."""

    sub: str
    name: str
    given_name: str
    family_name: str
    email: str
    student_number: str | None
    role: str  # learner, teacher, ta, observer


@dataclass
class Course:
    """A course of the platform, with its members and gradebook."""

    id: str
    title: str
    label: str
    members: list[Person] = field(default_factory=list)
    lineitems: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)


class SimulatedPlatform:
    """An LMS (Canvas- or Moodle-flavoured) that quizsvc can be registered with."""

    def __init__(self, flavor: str = "canvas", *, host: str = "127.0.0.1"):
        assert flavor in ROLES
        self.flavor = flavor
        self.key = rsa_key()
        self.kid = f"{flavor}-{uuid.uuid4().hex[:8]}"
        self.client_id = "10000000000042" if flavor == "canvas" else "Mv7iD3Zc8nYQ2pX"
        self.deployment_id = (
            "42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb" if flavor == "canvas" else "3"
        )
        self.tool_url = ""  # set by the test: the served quizsvc, with a slash
        self.courses: dict[str, Course] = {}
        self.people: dict[str, Person] = {}
        self.tokens: dict[str, list[str]] = {}
        self.token_requests: list[dict[str, Any]] = []
        # Statuses the score endpoint answers before it records (e.g. [503, 429]).
        self.score_failures: list[int] = []
        self.retry_after: str | None = None
        self.score_attempts = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://{host}:{self.server.server_address[1]}"
        # Where a browser opens the course pages: another site than the tool's
        # 127.0.0.1, so the iframe is cross-site as in a real LMS.
        self.page_origin = f"http://localhost:{self.server.server_address[1]}"
        self.issuer = (
            "https://canvas.instructure.com" if flavor == "canvas" else self.url
        )
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- set-up --------------------------------------------------------------------

    def registration_args(self) -> list[str]:
        """`quizsvc lti add-platform` options for this platform."""
        args = [
            "--issuer", self.issuer,
            "--client-id", self.client_id,
            "--deployment-id", self.deployment_id,
            "--auth-login-url", self.url + "/auth",
            "--auth-token-url", self.url + "/token",
            "--key-set-url", self.url + "/jwks",
            "--name", f"Simulated {self.flavor}",
        ]  # fmt: skip
        if self.flavor == "canvas":
            # Canvas Cloud's issuer is not where its pages live.
            args += ["--frame-origin", self.url]
        args += ["--frame-origin", self.page_origin]
        return args

    def add_course(self, course_id: str, title: str, label: str = "ATT16") -> Course:
        course = Course(course_id, title, label)
        self.courses[course_id] = course
        return course

    def add_person(
        self,
        course: Course,
        key: str,
        name: str,
        role: str,
        *,
        student_number: str | None = None,
    ) -> Person:
        given, _, family = name.partition(" ")
        sub = (
            uuid.uuid5(uuid.NAMESPACE_URL, self.url + key).hex
            if self.flavor == "canvas"
            else str(100 + len(self.people))
        )
        person = Person(
            sub, name, given, family, f"{key}@school.example", student_number, role
        )
        self.people[key] = person
        course.members.append(person)
        return person

    # --- id_tokens -----------------------------------------------------------------

    def claims(
        self,
        person: Person,
        course: Course | None,
        *,
        nonce: str,
        message_type: str = "LtiResourceLinkRequest",
        target: str | None = None,
        custom: dict[str, str] | None = None,
        deep_link_return: str | None = None,
    ) -> dict[str, Any]:
        """The claims Canvas or Moodle put in a launch's id_token."""
        now = int(time.time())
        target = target or self.tool_url + "lti/launch"
        body: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.client_id,
            "sub": person.sub,
            "iat": now,
            "exp": now + 3600 if self.flavor == "canvas" else now + 60,
            "nonce": nonce,
            "name": person.name,
            "given_name": person.given_name,
            "family_name": person.family_name,
            "email": person.email,
            CLAIM + "message_type": message_type,
            CLAIM + "version": "1.3.0",
            CLAIM + "deployment_id": self.deployment_id,
            CLAIM + "target_link_uri": target,
            CLAIM + "roles": ROLES[self.flavor][person.role],
            CLAIM + "custom": custom or {},
        }
        if self.flavor == "canvas":
            body.update(
                {
                    "azp": self.client_id,
                    "locale": "en",
                    "picture": "https://canvas.instructure.com/images/messages/avatar-50.png",
                    CLAIM + "tool_platform": {
                        "guid": "ABCD1234:canvas-lms",
                        "name": "Simulated University",
                        "version": "cloud",
                        "product_family_code": "canvas",
                        "validation_context": None,
                        "errors": {"errors": {}},
                    },
                    CLAIM + "launch_presentation": {
                        "document_target": "iframe",
                        "return_url": self.url + "/courses/1/external_content/success",
                        "locale": "en",
                        "height": 400,
                        "width": 800,
                    },
                    CLAIM + "lti11_legacy_user_id": secrets.token_hex(20),
                    CLAIM + "lti1p1": {"user_id": secrets.token_hex(20)},
                    "https://www.instructure.com/placement": "course_navigation",
                    "errors": {"errors": {}},
                }
            )
        else:
            body.update(
                {
                    CLAIM + "tool_platform": {
                        "product_family_code": "moodle",
                        "version": "2024100700",
                        "guid": urlsplit(self.url).netloc,
                        "name": "Simulated Moodle",
                        "description": "Simulated Moodle",
                    },
                    CLAIM + "launch_presentation": {
                        "locale": "zh_cn",
                        "document_target": "iframe",
                        "return_url": self.url + "/mod/lti/return.php?course=2",
                    },
                    CLAIM + "ext": {"user_username": person.email.split("@")[0]},
                }
            )
        if person.student_number:
            body[CLAIM + "lis"] = {
                "person_sourcedid": person.student_number,
                "course_section_sourcedid": "",
            }
        if course is not None:
            body[CLAIM + "context"] = {
                "id": course.id,
                "label": course.label,
                "title": course.title,
                "type": [LIS.replace("/v2/", "/v2/course#") + "CourseOffering"]
                if self.flavor == "canvas"
                else ["CourseSection"],
            }
            if message_type == "LtiResourceLinkRequest":
                body[CLAIM + "resource_link"] = {
                    "id": f"rl-{course.id}",
                    "title": "quizsvc",
                    "description": "",
                }
            suffix = "" if self.flavor == "canvas" else "?type_id=1"
            body["https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"] = {
                "context_memberships_url": f"{self.url}/nrps/{course.id}{suffix}",
                "service_versions": ["2.0"],
            }
            body["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"] = {
                "scope": AGS_SCOPES,
                "lineitems": f"{self.url}/lineitems/{course.id}{suffix}",
            }
        if message_type == "LtiDeepLinkingRequest":
            body[
                "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
            ] = {
                "deep_link_return_url": deep_link_return
                or self.url + "/deep_link_return",
                "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"],
                "accept_multiple": False,
                "data": "opaque-platform-data",
            }
        return body

    def sign(self, body: dict[str, Any], *, key=None, kid: str | None = None) -> str:
        """An id_token signed with the platform's key (or another one)."""
        return jwt.encode(
            body, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid}
        )

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    # --- the login a course page starts --------------------------------------------

    def login_params(
        self,
        person: Person,
        course: Course | None,
        *,
        message_type: str = "LtiResourceLinkRequest",
        custom: dict[str, str] | None = None,
        target: str | None = None,
        issuer: str | None = None,
    ) -> dict[str, str]:
        """The third-party-initiated login parameters the platform sends the tool."""
        hint = {
            "course": course.id if course else None,
            "message_type": message_type,
            "custom": custom or {},
        }
        return {
            "iss": issuer or self.issuer,
            "login_hint": person.sub,
            "target_link_uri": target or self.tool_url + "lti/launch",
            "lti_message_hint": json.dumps(hint),
            "client_id": self.client_id,
            "lti_deployment_id": self.deployment_id,
        }

    def login_url(self, *args, **kwargs) -> str:
        return (
            self.tool_url + "lti/login?" + urlencode(self.login_params(*args, **kwargs))
        )

    # --- the services' access tokens -------------------------------------------------

    def check_assertion(self, assertion: str) -> dict[str, Any]:
        """Verify the tool's client-credentials JWT with the tool's published keys."""
        header = jwt.get_unverified_header(assertion)
        with urllib.request.urlopen(self.tool_url + "lti/jwks", timeout=10) as answer:
            key_set = json.load(answer)
        matching = [k for k in key_set["keys"] if k["kid"] == header.get("kid")]
        if not matching:
            raise jwt.InvalidTokenError(f"no tool key {header.get('kid')!r}")
        public = RSAAlgorithm.from_jwk(json.dumps(matching[0]))
        claims = jwt.decode(
            assertion,
            public,
            algorithms=["RS256"],
            audience=self.url + "/token",
            options={"require": ["exp", "iat", "jti", "iss", "sub"]},
        )
        if claims["iss"] != self.client_id or claims["sub"] != self.client_id:
            raise jwt.InvalidTokenError("iss/sub is not the client id")
        return claims

    def token_scopes(self, header: str | None) -> list[str]:
        scheme, _, token = (header or "").partition(" ")
        if scheme != "Bearer":
            return []
        return self.tokens.get(token, [])

    def drop_tokens(self) -> None:
        """Forget every token issued (the next service call gets a 401)."""
        self.tokens.clear()

    # --- HTTP -------------------------------------------------------------------------

    def _handler(self):
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body: Any, content_type="application/json",
                      headers: dict[str, str] | None = None):  # fmt: skip
                data = body if isinstance(body, bytes) else (
                    json.dumps(body).encode() if content_type.endswith("json")
                    else str(body).encode()
                )  # fmt: skip
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _query(self) -> dict[str, str]:
                return {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}

            def _form(self) -> dict[str, str]:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                return {k: v[0] for k, v in parse_qs(raw).items()}

            def _json(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"null")

            def do_GET(self):
                path = urlsplit(self.path).path
                if path == "/jwks":
                    return self._send(200, platform.jwks())
                if path == "/auth":
                    return self._auth(self._query())
                if path.startswith("/nrps/"):
                    return self._nrps(path.split("/")[2])
                if path.startswith("/lineitems/"):
                    return self._lineitems_get(path.split("/")[2])
                if path.startswith("/course/"):
                    return self._course_page(path.split("/")[2], self._query())
                return self._send(404, {"error": "not found"})

            def do_POST(self):
                path = urlsplit(self.path).path
                if path == "/token":
                    return self._token(self._form())
                parts = path.split("/")
                if path.startswith("/lineitems/") and len(parts) == 3:
                    return self._lineitems_post(parts[2], self._json())
                if path.startswith("/lineitems/") and parts[-1] == "scores":
                    return self._score(parts[2], int(parts[3]), self._json())
                if path == "/deep_link_return":
                    form = self._form()
                    platform.deep_link_responses.append(form.get("JWT"))
                    return self._send(200, "<p id='dl-done'>added</p>", "text/html")
                return self._send(404, {"error": "not found"})

            def _auth(self, q: dict[str, str]):
                if q.get("client_id") != platform.client_id:
                    return self._send(400, {"error": "unauthorized_client"})
                redirect = q.get("redirect_uri", "")
                allowed = {
                    platform.tool_url + "lti/launch",
                    platform.tool_url + "lti/deep-link",
                }
                if redirect not in allowed or q.get("response_mode") != "form_post":
                    return self._send(400, {"error": "invalid_request_uri"})
                person = next(
                    (
                        p
                        for p in platform.people.values()
                        if p.sub == q.get("login_hint")
                    ),
                    None,
                )
                if person is None:
                    return self._send(400, {"error": "login_required"})
                hint = json.loads(q.get("lti_message_hint") or "{}")
                course = platform.courses.get(hint.get("course") or "")
                body = platform.claims(
                    person,
                    course,
                    nonce=q["nonce"],
                    message_type=hint.get("message_type", "LtiResourceLinkRequest"),
                    custom=hint.get("custom"),
                    target=redirect,
                )
                platform.issued.append(body)
                token = platform.sign(body)
                action, state = html.escape(redirect), html.escape(q["state"])
                page = (
                    "<!doctype html><title>Launching</title>"
                    f'<form id="lti-launch" method="post" action="{action}">'
                    f'<input type="hidden" name="id_token" value="{token}">'
                    f'<input type="hidden" name="state" value="{state}">'
                    "<button>Continue</button></form>"
                    "<script>document.getElementById('lti-launch').submit()</script>"
                )
                return self._send(200, page, "text/html; charset=utf-8")

            def _token(self, form: dict[str, str]):
                platform.token_requests.append(form)
                if (
                    form.get("grant_type") != "client_credentials"
                    or form.get("client_assertion_type")
                    != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
                ):
                    return self._send(400, {"error": "unsupported_grant_type"})
                try:
                    platform.check_assertion(form.get("client_assertion", ""))
                except jwt.InvalidTokenError as exc:
                    return self._send(
                        401, {"error": "invalid_client", "detail": str(exc)}
                    )
                token = secrets.token_urlsafe(24)
                platform.tokens[token] = form.get("scope", "").split()
                return self._send(
                    200,
                    {"access_token": token, "token_type": "Bearer", "expires_in": 3600,
                     "scope": form.get("scope", "")},
                )  # fmt: skip

            def _authorized(self, scope: str) -> bool:
                return scope in platform.token_scopes(self.headers.get("Authorization"))

            def _nrps(self, course_id: str):
                if not self._authorized(NRPS_SCOPE):
                    return self._send(401, {"error": "unauthorized"})
                course = platform.courses[course_id]
                page = int(self._query().get("page", "1"))
                members = course.members[(page - 1) * 2 : page * 2]
                headers = {}
                if page * 2 < len(course.members):
                    headers["Link"] = (
                        f'<{platform.url}/nrps/{course_id}?page={page + 1}>; rel="next"'
                    )
                body = {
                    "id": f"{platform.url}/nrps/{course_id}",
                    "context": {
                        "id": course.id,
                        "label": course.label,
                        "title": course.title,
                    },
                    "members": [
                        {
                            "status": "Active",
                            "name": p.name,
                            "given_name": p.given_name,
                            "family_name": p.family_name,
                            "email": p.email,
                            "user_id": p.sub,
                            "lis_person_sourcedid": p.student_number,
                            "roles": ROLES[platform.flavor][p.role],
                        }
                        for p in members
                    ],
                }
                return self._send(
                    200, body,
                    "application/vnd.ims.lti-nrps.v2.membershipcontainer+json", headers,
                )  # fmt: skip

            def _lineitems_get(self, course_id: str):
                if not self._authorized(AGS_SCOPES[0]):
                    return self._send(401, {"error": "unauthorized"})
                return self._send(
                    200,
                    platform.courses[course_id].lineitems,
                    "application/vnd.ims.lis.v2.lineitemcontainer+json",
                )

            def _lineitems_post(self, course_id: str, item: dict[str, Any]):
                if not self._authorized(AGS_SCOPES[0]):
                    return self._send(401, {"error": "unauthorized"})
                course = platform.courses[course_id]
                suffix = "" if platform.flavor == "canvas" else "?type_id=1"
                n = len(course.lineitems) + 1
                created = {
                    **item,
                    "id": f"{platform.url}/lineitems/{course_id}/{n}{suffix}",
                }
                course.lineitems.append(created)
                return self._send(
                    201, created, "application/vnd.ims.lis.v2.lineitem+json"
                )

            def _score(self, course_id: str, n: int, score: dict[str, Any]):
                with platform.lock:
                    platform.score_attempts += 1
                    failure = (
                        platform.score_failures.pop(0)
                        if platform.score_failures
                        else None
                    )
                if failure == 401:
                    platform.drop_tokens()
                if failure is not None:
                    headers = {}
                    if failure == 429 and platform.retry_after:
                        headers["Retry-After"] = platform.retry_after
                    return self._send(failure, {"error": "simulated"}, headers=headers)
                if not self._authorized(AGS_SCOPES[3]):
                    return self._send(401, {"error": "unauthorized"})
                if self.headers.get("Content-Type") != (
                    "application/vnd.ims.lis.v1.score+json"
                ):
                    return self._send(415, {"error": "content type"})
                course = platform.courses[course_id]
                if not 0 < n <= len(course.lineitems):
                    return self._send(404, {"error": "no such line item"})
                item_id = course.lineitems[n - 1]["id"]
                with platform.lock:
                    course.scores.append({**score, "lineitem": item_id})
                return self._send(204, b"")

            def _course_page(self, course_id: str, q: dict[str, str]):
                person = platform.people[q["user"]]
                course = platform.courses[course_id]
                src = platform.login_url(person, course)
                page = (
                    "<!doctype html><title>Course</title>"
                    f"<h1>{html.escape(course.title)}</h1>"
                    f'<iframe id="tool" src="{html.escape(src)}" width="1000" '
                    'height="700" allow="clipboard-write"></iframe>'
                )
                return self._send(200, page, "text/html; charset=utf-8")

        self.issued: list[dict[str, Any]] = []
        self.deep_link_responses: list[str | None] = []
        return Handler

    # --- reading the gradebook -------------------------------------------------------

    def latest_scores(self, course: Course) -> dict[str, float]:
        """The newest score per user, as a gradebook shows it."""
        latest: dict[str, dict[str, Any]] = {}
        for score in course.scores:
            if score["userId"] not in latest or (
                score["timestamp"] >= latest[score["userId"]]["timestamp"]
            ):
                latest[score["userId"]] = score
        return {user: s["scoreGiven"] for user, s in latest.items()}


_counter = itertools.count()
