"""Server-side request forgery: the workers call only hosts the operator allows, private and
local addresses only when the operator says so, checked when an endpoint is saved and again
when it is called (the address connected to is the one checked; redirects are not followed).

Only loopback listeners are ever contacted: the private-range spellings below are refused
before any connection, and the save-time check resolves literals without the network.
"""

from __future__ import annotations

import socket

import pytest

from llm.executor import run_execute
from llm.hosts import HostPolicy, is_public
from llm.models import Endpoint, UnitStatus
from llm.services import EndpointError, endpoint_check, run_plan, run_start
from tests.factories import EndpointFactory
from tests.factories.llm import study_with_pairs
from tests.llm.listener import Listener

pytestmark = pytest.mark.django_db

PRIVATE_SPELLINGS = [
    "http://127.0.0.1:8000/v1",
    "http://localhost:8000/v1",
    "http://2130706433:8000/v1",  # decimal 127.0.0.1
    "http://0177.0.0.1:8000/v1",  # octal
    "http://0x7f000001:8000/v1",  # hex
    "http://127.1:8000/v1",  # short form
    "http://[::1]:8000/v1",
    "http://[::ffff:127.0.0.1]:8000/v1",  # IPv4-mapped
    "http://[64:ff9b::7f00:1]:8000/v1",  # NAT64 of 127.0.0.1
    "http://[2002:7f00:1::]:8000/v1",  # 6to4 of 127.0.0.1
    "http://0.0.0.0:8000/v1",
    "http://10.0.0.1/v1",
    "http://172.16.5.4/v1",
    "http://192.168.1.10/v1",
    "http://100.64.0.1/v1",  # carrier-grade NAT
    "http://169.254.169.254/latest/meta-data",  # the cloud metadata service
    "http://[fe80::1]/v1",
    "http://[fd00::1]/v1",
]


@pytest.fixture
def any_public_host(settings):
    """Every name allowed, private networks not: only the address rule decides."""
    settings.LLM_ALLOWED_HOSTS = ["*"]
    settings.LLM_ALLOW_PRIVATE_NETWORKS = False


def _check(url: str, provider: str = "openai") -> None:
    endpoint_check(provider=provider, base_url=url, api_key_env="", study_id=None)


@pytest.mark.parametrize("url", PRIVATE_SPELLINGS)
def test_private_and_local_addresses_are_refused_however_they_are_spelled(any_public_host, url):
    with pytest.raises(EndpointError, match="a private or local address"):
        _check(url)


@pytest.mark.parametrize("url", PRIVATE_SPELLINGS[:3])
def test_the_operator_can_allow_local_model_servers(settings, url):
    settings.LLM_ALLOWED_HOSTS = ["*"]
    settings.LLM_ALLOW_PRIVATE_NETWORKS = True
    _check(url)  # no error


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://api.openai.com.evil.example/v1", "not on the operator's list"),
        ("https://evil.example/v1", "not on the operator's list"),
        ("https://user:pw@api.openai.com/v1", "user name or password"),
        ("ftp://api.openai.com/v1", "must start with http:// or https://"),
        ("file:///etc/passwd", "must start with http:// or https://"),
        ("https://api.openai.com:99999/v1", "not a valid URL"),
    ],
)
def test_hosts_off_the_operators_list_are_refused_by_name(url, reason):
    with pytest.raises(EndpointError, match=reason):
        _check(url)


def test_a_public_host_must_use_https(settings, monkeypatch):
    settings.LLM_ALLOWED_HOSTS = ["models.example.org"]
    public = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 80))]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: public)
    with pytest.raises(EndpointError, match="use https:// for models.example.org"):
        _check("http://models.example.org/v1")
    _check("https://models.example.org/v1")


def test_an_empty_base_url_is_the_providers_api_and_follows_the_same_list(settings):
    _check("", provider="anthropic")  # api.anthropic.com is allowed by default
    settings.LLM_ALLOWED_HOSTS = ["api.openai.com"]
    with pytest.raises(EndpointError, match="api.anthropic.com is not on the operator's list"):
        _check("", provider="anthropic")


def test_domain_entries_cover_subdomains_only_as_written():
    policy = HostPolicy(names=(".example.org", "api.openai.com"), allow_private=False)
    assert policy.name_allowed("example.org") and policy.name_allowed("llm.example.org")
    assert not policy.name_allowed("example.org.evil.net")
    assert not policy.name_allowed("badexample.org")
    assert policy.name_allowed("API.OpenAI.com.")
    assert not is_public("::ffff:10.0.0.1") and is_public("8.8.8.8")


def _run_against(endpoint: Endpoint):
    study = study_with_pairs(1)
    run = run_plan(study=study, kind="generate", endpoints=[endpoint])
    run_start(run=run, dispatch=False)
    run_execute(run.pk)
    return run.units.get()


def _endpoint(base_url: str) -> Endpoint:
    """A row as it could be in the database (saved when its name meant something else)."""
    return EndpointFactory(
        name="probe", provider="openai", model="m", family="f", base_url=base_url,
        max_retries=1, timeout_s=5,
    )  # fmt: skip


@pytest.mark.parametrize("spelling", ["127.0.0.1", "2130706433", "0x7f000001", "localhost"])
def test_calls_to_a_local_listener_are_refused_when_made(any_public_host, spelling):
    with Listener() as listener:
        unit = _run_against(_endpoint(f"http://{spelling}:{listener.port}/v1"))
    assert unit.status == UnitStatus.FAILED
    assert unit.error.startswith("refused: not called:") and "private or local" in unit.error
    assert listener.connections == 0


def test_a_name_that_changes_its_address_after_the_check_is_not_followed(settings, monkeypatch):
    # DNS rebinding: the name answers a public address to the checks, then a local one. The
    # connection goes to the address the guard resolved and judged itself, so it never starts.
    settings.LLM_ALLOWED_HOSTS = ["rebind.example"]
    settings.LLM_ALLOW_PRIVATE_NETWORKS = False
    real = socket.getaddrinfo
    answers = iter(["93.184.216.34"] * 2)  # the save-time and the client's own check

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.example":
            return real(host, port, *args, **kwargs)
        address = next(answers, "127.0.0.1")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with Listener() as listener:
        url = f"https://rebind.example:{listener.port}/v1"
        _check(url)  # public when saved
        unit = _run_against(_endpoint(url))
    assert unit.status == UnitStatus.FAILED
    assert "rebind.example resolves to 127.0.0.1" in unit.error
    assert listener.connections == 0


def test_redirects_are_not_followed(settings):
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]  # the second listener's "localhost" is not
    with Listener() as target, Listener(redirect_to="") as first:
        first.redirect_to = f"http://localhost:{target.port}"
        unit = _run_against(_endpoint(f"{first.url}/v1"))
    assert unit.status == UnitStatus.FAILED and "HTTP 307" in unit.error
    assert len(first.requests) == 1  # answered 307: not followed, not retried
    assert target.connections == 0


@pytest.fixture
def one_local_model_server(settings):
    """The operator lists the local host and allows one model server on it by port."""
    settings.LLM_ALLOWED_HOSTS = ["api.openai.com", "127.0.0.1"]
    settings.LLM_ALLOW_PRIVATE_NETWORKS = False
    settings.LLM_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1:11434"]


def test_an_allowed_local_model_server_opens_its_port_only(one_local_model_server):
    _check("http://127.0.0.1:11434/v1")  # no error
    for url in ["http://127.0.0.1:5432/", "http://127.0.0.1:6379/", "http://127.0.0.1/v1"]:
        with pytest.raises(EndpointError, match="a private or local address"):
            _check(url)
    with pytest.raises(EndpointError, match="not allowed 127.0.0.1:5432"):
        _check("http://127.0.0.1:5432/")
    with pytest.raises(EndpointError, match="not on the operator's list"):
        _check("http://localhost:5432/")  # neither listed nor allowed by port


def test_a_call_reaches_the_listed_port_and_never_another_one(settings):
    settings.LLM_ALLOWED_HOSTS = ["*"]
    settings.LLM_ALLOW_PRIVATE_NETWORKS = False
    with Listener() as allowed, Listener() as other:
        settings.LLM_ALLOWED_PRIVATE_HOSTS = [f"127.0.0.1:{allowed.port}"]
        refused = _run_against(_endpoint(f"http://127.0.0.1:{other.port}/v1"))
        assert refused.status == UnitStatus.FAILED and "private or local" in refused.error
        assert other.connections == 0
        Endpoint.objects.filter(name="probe").update(name="refused")
        done = _run_against(_endpoint(f"http://127.0.0.1:{allowed.port}/v1"))
        assert done.status == UnitStatus.DONE, done.error
        assert allowed.connections >= 1


def test_private_host_entries_are_host_and_port():
    from llm.hosts import host_and_port

    assert host_and_port("127.0.0.1:11434") == ("127.0.0.1", 11434)
    assert host_and_port("LocalHost:8000") == ("localhost", 8000)
    assert host_and_port("[::1]:11434") == ("::1", 11434)
    with pytest.raises(ValueError, match="must be host:port"):
        host_and_port("127.0.0.1")
