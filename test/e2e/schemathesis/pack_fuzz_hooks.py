"""Schemathesis hooks for test/e2e/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).

They teach the fuzzer the rules of the API that JSON Schema cannot state and that the
OpenAPI document gives in words instead. Each applies to positive cases only (data the
document calls valid, which the server must accept); negative cases are left as generated, so
every check still runs on every operation. Nothing here drops a case or a failure.

- A URL field must parse as a URL and its host must be one the address guard allows
  (PACK_ALLOWED_TARGET_CIDRS): the pattern in the document says only how it starts. Positive
  URLs become the test's loopback sink, which also keeps the run off any other address.
- `service` and `llm_model` in a processor or webhook body name a Service the caller owns and an LLM model that
  exists: they become the ids the test seeded.
- The dashboard's `from` must not be after `to`, nor more than 366 days before it.
- A price has at most 6 decimals and 40 characters once written out, and is at most 1,000,000:
  others become "0.15".
- An LLM model's `fallback_models` name other models that exist, none twice, without a cycle
  (docs/decisions/0045): positive bodies send `[]`.
- An LLM model's extra_data is the document's own (per provider, partial without `provider`):
  nothing in its shape is rewritten. Fixtures only: its URLs become the test's fake provider of
  that wire format (the fake genai token server takes either token_request_format), its
  secrets and assistant id the fakes' (FUZZ_KEY, asst_fuzz), so a connection test reaches a
  provider that answers; and a PATCH or connection test goes to the seeded model of the body's
  provider (without `provider`, of a provider whose keys the body's extra_data holds), as the
  document says a partial extra_data is of the stored provider.
- A model's timeout is at least 30 s, so a connection test to a fake provider that polls (the
  Assistants flow) has the time to finish.
- A Change Instance Validator takes no response_schema: positive processor bodies of one, and
  PATCHes (whose stored kind may be one), send null.
- A settings group left enabled needs its required fields, the stored values counting: positive
  settings changes leave the groups that have such fields disabled (which also keeps the
  gateway from reaching for generated LDAP, SMTP or identity-provider hosts). The sign-in
  issuer is an address the guard allows (the sink) and the redirect base an origin without a
  path (the sink's).
- A sign-in's `return_to` is the console's home or one of its pages: positive cases send `/`.

One hook bounds the coverage phase (filter_case): each rule of an operation's schema is tried
once, with the first case schemathesis makes of it. A rule is what the case's metadata names:
its mode (positive or negative), scenario (a wrong type, a value past a maximum, a boundary
value...), description (the field and the rule) and schema location. The same rule at another
value, or in another branch of a union that shares the field (a model's `timeout` in each
provider's branch), is the same rule again: about 36 wrong types of one field of a connection
test became one, and the run's ~6,900 coverage cases ~3,200, every rule of every operation
still tried. The fuzzing phase is bounded by --max-examples.

One hook changes how the document is read, not what it says: a URL field's two patterns
(`allOf` of "no NUL" and the URL rule) become the URL rule alone, a pattern of its own. The URL
rule's every character class leaves NUL out, so the field takes exactly the strings it took;
but with the patterns under `allOf` schemathesis builds its "longer than maxLength" case (2,049
characters) by drawing strings that match the URL rule, which took about 240 CPU seconds per
URL field, while a pattern of its own is set aside for that case (the value violates maxLength
whatever its text) and every other case is drawn as before.
"""

import json
import os
import re
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation

import schemathesis

TARGET_URL = os.environ["PACK_FUZZ_TARGET_URL"]
SEEDED = json.loads(os.environ["PACK_FUZZ_IDS"])
# A complete extra_data per provider, pointing at the test's fake provider of that wire format.
EXTRA_DATA = json.loads(os.environ["PACK_FUZZ_EXTRA_DATA"])
# The seeded LLM model of each provider: {provider: id}.
MODELS = json.loads(os.environ["PACK_FUZZ_MODELS"])
# Providers whose models may be set to a native JSON-schema response format.
NATIVE = {"vendor1", "vendor3", "genai"}
MODEL_FIXTURES = {"api_key", "VENDOR1_API_KEY", "credentials", "VENDOR1_ASSISTANT_ID"}
URL_FIELDS = {"base_url", "token_url", "request_url", "target_url"}
TARGET_ORIGIN = re.match(r"^[a-z]+://[^/?#]+", TARGET_URL).group(0)
OIDC_LOGIN_PATH = "/v1/core/auth/oidc/login/"
REFERENCES = {"service": "service", "llm_model": "llm_model"}
REFERENCING_PATHS = ("/v1/ai/processors/", "/v1/external/serviceowner/webhooks/")
MAX_PRICE = 1_000_000
PRICE_FIELDS = {"input_price_per_1m_tokens", "output_price_per_1m_tokens"}
DECIMAL = re.compile(r"^([0-9]+)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$", re.ASCII)
MODEL_PATHS = ("/v1/ai/llm_models/", "/v1/ai/llm_models/{id}/", "/v1/ai/llm_models/test_connection/{id}/")
SETTINGS_PATH = "/v1/core/general_settings/"
GROUPS_WITH_REQUIRED_FIELDS = ("ldap", "smtp", "feedback", "oauth", "global_banner")
# 366 days is the limit; a day less keeps the hour rounding of the range inside it.
LONGEST_RANGE = timedelta(days=365)


def _positive(case) -> bool:
    return case.meta is not None and case.meta.generation.mode.is_positive


def _with_targets(value, references: bool):
    if isinstance(value, list):
        return [_with_targets(item, references) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in URL_FIELDS and isinstance(item, str):
            out[key] = TARGET_URL
        elif references and key in REFERENCES and isinstance(item, (int, float)) and not isinstance(item, bool):
            out[key] = SEEDED[REFERENCES[key]]
        else:
            out[key] = _with_targets(item, references)
    return out


def _price_ok(value) -> bool:
    if value is None:
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        match = DECIMAL.match(value)
        if not match or abs(int(match.group(3) or 0)) > 40:
            return False
    try:
        number = Decimal(value if isinstance(value, str) else repr(value))
    except InvalidOperation:
        return False
    if not number.is_finite() or number < 0:
        return False
    exponent = number.normalize().as_tuple().exponent
    decimals = max(0, -exponent)
    whole = len(str(int(number)))
    return decimals <= 6 and whole + (decimals + 1 if decimals else 0) <= 40 and number <= MAX_PRICE


def _model_fields(body: dict, path: str) -> None:
    for field in PRICE_FIELDS & body.keys():
        if not _price_ok(body[field]):
            body[field] = "0.15"
    # Not a rule of the API: the fake Assistants provider polls for over a second, and a model
    # timeout shorter than its answer is a 504 (the provider did not answer in time).
    if isinstance(body.get("timeout"), (int, float)) and body["timeout"] < 30:
        body["timeout"] = 30
    # Fallbacks name other models that exist, without a cycle (0045): positive bodies name none.
    if "fallback_models" in body:
        body["fallback_models"] = []


def _keys_of(provider: str) -> set:
    return set(EXTRA_DATA[provider]) | ({"token_request_format"} if provider == "genai" else set())


def _model_fixtures(case, body: dict) -> None:
    """The fakes' addresses and secrets, and the seeded model of the body's provider."""
    extra = body.get("extra_data")
    provider = body.get("provider")
    if provider is None:
        keys = set(extra) if isinstance(extra, dict) else set()
        native = body.get("structured_output") == "native"
        provider = next((p for p in MODELS if keys <= _keys_of(p) and (p in NATIVE or not native)), None)
    if provider not in MODELS:
        return
    if "{id}" in case.operation.path:
        case.path_parameters = {**(case.path_parameters or {}), "id": MODELS[provider]}
    if not isinstance(extra, dict):
        return
    fixture = EXTRA_DATA[provider]
    for key in list(extra):
        # A null base_url is the provider's own endpoint, which the test cannot reach: the fake's.
        if key in MODEL_FIXTURES or key in URL_FIELDS:
            extra[key] = fixture[key]


def _processor_fields(body: dict, path: str) -> None:
    # A Change Instance Validator takes no response_schema; a PATCH may be of one.
    if "response_schema" in body and (body.get("kind") == "change_instance_validator" or "{id}" in path):
        body["response_schema"] = None


def _settings_fields(body: dict) -> None:
    for group in GROUPS_WITH_REQUIRED_FIELDS:
        if isinstance(body.get(group), dict):
            body[group]["ENABLED"] = False
    oauth = body.get("oauth")
    if isinstance(oauth, dict):
        # The issuer is an address the gateway reaches; the redirect base an origin, no path.
        if isinstance(oauth.get("ISSUER_URL"), str) and oauth["ISSUER_URL"]:
            oauth["ISSUER_URL"] = TARGET_URL
        if isinstance(oauth.get("REDIRECT_BASE_URL"), str) and oauth["REDIRECT_BASE_URL"]:
            oauth["REDIRECT_BASE_URL"] = TARGET_ORIGIN


def _instant(text):
    """The instant an ISO 8601 date or date-time names (UTC unless it has an offset), or None."""
    if not isinstance(text, str):
        return None
    try:
        if "T" not in text:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _within_range(query: dict) -> None:
    start = _instant(query.get("from"))
    if start is None:
        return
    end = _instant(query.get("to")) if "to" in query else datetime.now(timezone.utc)
    if end is None:
        return
    if start > end or end - start > LONGEST_RANGE:
        if "to" in query:
            query["from"] = query["to"]
        else:
            del query["from"]


def _ordered_window(body: dict) -> None:
    """A recovery's cross-field rule, stated in words in the document: `until` not before `since`."""
    start = _instant(body.get("since"))
    end = _instant(body.get("until"))
    if start is not None and end is not None and end < start:
        body["since"], body["until"] = body["until"], body["since"]


URL_RULE = re.compile(r"^\^(\\s\*)?\[Hh\]\[Tt\]\[Tt\]\[Pp\]\[Ss\]\?:")
NUL_FREE = {"pattern": "^[^\\u0000]*$"}


def _url_patterns_alone(node) -> None:
    if isinstance(node, list):
        for item in node:
            _url_patterns_alone(item)
        return
    if not isinstance(node, dict):
        return
    parts = node.get("allOf")
    if (
        "pattern" not in node
        and isinstance(parts, list)
        and len(parts) == 2
        and parts[0] == NUL_FREE
        and isinstance(parts[1], dict)
        and set(parts[1]) == {"pattern"}
        and URL_RULE.match(parts[1]["pattern"])
        and "\\u0000-" in parts[1]["pattern"]
    ):
        del node["allOf"]
        node["pattern"] = parts[1]["pattern"]
    for value in node.values():
        _url_patterns_alone(value)


# Per operation, the coverage rules already tried.
_TRIED: dict = {}


def _rule(case):
    data = case.meta.phase.data
    return (
        str(case.meta.generation.mode),
        str(data.scenario),
        data.description,
        data.location,
        str(data.parameter_location),
        data.parameter,
    )


@schemathesis.hook
def filter_case(context, case):
    meta = case.meta
    if meta is None or meta.phase.name != "coverage":
        return True
    tried = _TRIED.setdefault(f"{case.operation.method.upper()} {case.operation.path}", set())
    rule = _rule(case)
    if rule in tried:
        return False
    tried.add(rule)
    return True


@schemathesis.hook
def before_load_schema(context, raw_schema):
    _url_patterns_alone(raw_schema)


@schemathesis.hook
def map_case(context, case):
    path = case.operation.path
    # Stateful cases (no generation mode) reuse what a read answered (a masked secret, another
    # model's extra_data): they get the model fixtures too; negative cases never do.
    model_case = isinstance(case.body, dict) and path in MODEL_PATHS
    if not _positive(case):
        if case.meta is None and model_case:
            _model_fixtures(case, case.body)
        return case
    if isinstance(case.body, (dict, list)):
        case.body = _with_targets(case.body, path.startswith(REFERENCING_PATHS))
    if isinstance(case.body, dict) and path.startswith("/v1/ai/llm_models/"):
        _model_fields(case.body, path)
    if model_case:
        # After _with_targets: a model's URLs are the fake provider's, not the sink.
        _model_fixtures(case, case.body)
    if isinstance(case.body, dict) and path.startswith("/v1/ai/processors/"):
        _processor_fields(case.body, path)
    if isinstance(case.body, dict) and path == SETTINGS_PATH:
        _settings_fields(case.body)
    if path == "/v1/ai/dashboard/" and isinstance(case.query, dict):
        _within_range(case.query)
    if path == OIDC_LOGIN_PATH and isinstance(case.query, dict) and "return_to" in case.query:
        case.query["return_to"] = "/"
    if path.endswith("/recover/") and isinstance(case.body, dict):
        _ordered_window(case.body)
    return case
