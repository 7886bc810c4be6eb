"""Judges (training/judges/rubric.py): agreement on hand-written clear-cut pairs, the OpenAI-compatible judge
against a loopback stand-in server, the local GGUF judge, specs and the combination."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from engine.errors import InputError, ModelError
from engine.persona_files import load_set
from training.judges.factory import make_rubric_judge as make_judge
from training.judges.heuristic import HeuristicJudge
from training.judges.llm import LocalJudge, OpenAIJudge
from training.judges.rubric import DIMENSIONS, CombinedJudge, Scores, agreement, load_pairs
from training.scenarios import load_scenarios

# Measured on the 48 pairs (docs/judge.md): heuristic 0.9375. The threshold leaves room for
# numeric differences across machines and library versions, not for a broken judge.
HEURISTIC_MIN_AGREEMENT = 0.85


@pytest.fixture(scope="module")
def heuristic():
    return HeuristicJudge()


@pytest.fixture
def case():
    sc = next(s for s in load_scenarios("support") if s.id == "support-001")
    return sc, load_set("support").member("Mia")


class FixedJudge:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def score(self, scenario, persona, reply, others=None):
        return Scores({d: self.value for d in DIMENSIONS}, self.name)


def test_pairs_file_is_clear_cut_and_valid():
    pairs = load_pairs()
    assert len(pairs) >= 40
    scenarios = {s.id: s for s in load_scenarios()}
    for p in pairs:
        assert p.scenario in scenarios and p.better != p.worse
        load_set(scenarios[p.scenario].group).member(p.persona)
    assert {p.kind for p in pairs} >= {"generic", "off-topic", "out-of-character", "redundant"}


def test_heuristic_judge_agrees_with_clear_cut_pairs(heuristic):
    result = agreement(heuristic)
    assert result["pairs"] == len(load_pairs())
    assert result["agreement"] >= HEURISTIC_MIN_AGREEMENT, result
    assert result["mean_margin"] > 0.5


def test_heuristic_scores_are_in_range_and_punish_empty_and_redundant(heuristic, case):
    sc, mia = case
    good = heuristic.score(
        sc, mia, "Weekends alone in a new place sound so quiet. What do you miss most?"
    )
    assert set(good.values) == set(DIMENSIONS) and all(
        1.0 <= v <= 5.0 for v in good.values.values()
    )
    assert heuristic.score(sc, mia, "   ").mean == 1.0
    text = "Weekends alone in a new place sound so quiet. What do you miss most?"
    copied = heuristic.score(sc, mia, text, others=[{"speaker": "Theo", "text": text}])
    assert copied.values["social_contribution"] < good.values["social_contribution"]


def test_combined_judge_weights_each_dimension():
    sc, persona = load_scenarios("support")[0], load_set("support").member("Mia")
    j = CombinedJudge([FixedJudge("a", 1.0), FixedJudge("b", 5.0)], [3, 1])
    s = j.score(sc, persona, "hi")
    assert all(v == pytest.approx(2.0) for v in s.values.values()) and s.mean == pytest.approx(2.0)
    assert "a*0.75" in j.name
    with pytest.raises(InputError):
        CombinedJudge([FixedJudge("a", 1.0)], [0])


def test_make_judge_specs(tmp_path):
    assert isinstance(make_judge(), HeuristicJudge)
    assert isinstance(make_judge("heuristic"), HeuristicJudge)
    assert isinstance(make_judge("local"), LocalJudge)
    combined = make_judge("combined")
    assert isinstance(combined, CombinedJudge) and [j.name for j in combined.judges] == [
        "local",
        "heuristic",
    ]
    j = make_judge("openai:http://127.0.0.1:9/v1#tiny-judge")
    assert (
        isinstance(j, OpenAIJudge)
        and j.model == "tiny-judge"
        and j.base_url == "http://127.0.0.1:9/v1"
    )
    with pytest.raises(InputError, match="openai:BASE_URL#MODEL"):
        make_judge("openai:http://127.0.0.1:9/v1")
    with pytest.raises(InputError, match="does not exist"):
        make_judge(f"local:{tmp_path / 'missing.gguf'}")
    with pytest.raises(InputError, match="Unknown judge"):
        make_judge("oracle")


# -- OpenAI-compatible judge against a loopback stand-in ---------------------------------------------


class StandIn(BaseHTTPRequestHandler):
    """A minimal /v1/chat/completions: rejects json_schema when told to, checks the key."""

    reject_schema = False
    requests: list = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        if self.headers.get("Authorization") == "Bearer wrong":
            return self._send(401, {"error": "bad key"})
        if self.reject_schema and body["response_format"]["type"] == "json_schema":
            return self._send(400, {"error": "response_format json_schema unsupported"})
        reply = body["messages"][-1]["content"]
        score = 5 if "What do you miss most" in reply else 1
        content = json.dumps({d: score for d in DIMENSIONS})
        self._send(200, {"choices": [{"message": {"role": "assistant", "content": content}}]})

    def _send(self, code, data):
        raw = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def server():
    StandIn.requests = []
    StandIn.reject_schema = False
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()
    t.join(5)


def test_openai_judge_scores_through_a_loopback_endpoint(server, case):
    sc, mia = case
    judge = make_judge(f"openai:{server}#stand-in")
    judge.api_key = "secret"
    good = judge.score(sc, mia, "That sounds lonely. What do you miss most about home?")
    bad = judge.score(sc, mia, "Cool.")
    assert good.mean == 5.0 and bad.mean == 1.0 and good.judge == "openai:stand-in"
    req = StandIn.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer secret"
    assert req["body"]["model"] == "stand-in" and req["body"]["temperature"] == 0.0
    assert req["body"]["response_format"]["json_schema"]["schema"]["required"] == list(DIMENSIONS)
    assert "Situation: " + sc.situation in req["body"]["messages"][-1]["content"]


def test_openai_judge_falls_back_to_json_mode(server, case):
    StandIn.reject_schema = True
    judge = OpenAIJudge(server, "stand-in")
    sc, mia = case
    assert judge.score(sc, mia, "What do you miss most?").mean == 5.0
    assert [r["body"]["response_format"]["type"] for r in StandIn.requests] == [
        "json_schema",
        "json_object",
    ]
    judge.score(sc, mia, "Cool.")  # remembered: no second json_schema attempt
    assert StandIn.requests[-1]["body"]["response_format"]["type"] == "json_object"


def test_openai_judge_errors_are_one_line(server, case):
    sc, mia = case
    with pytest.raises(ModelError, match="API key") as e:
        OpenAIJudge(server, "m", api_key="wrong").score(sc, mia, "hi")
    assert "\n" not in str(e.value)
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    closed = OpenAIJudge(f"http://127.0.0.1:{port}/v1", "m", timeout=2)
    with pytest.raises(ModelError, match="not reachable|failed"):
        closed.score(sc, mia, "hi")
    with pytest.raises(InputError):
        OpenAIJudge("ftp://example", "m")


# -- local GGUF judge ------------------------------------------------------------------------------------


@pytest.mark.model
def test_local_judge_scores_one_to_five(case, pool, bundled_path):
    sc, mia = case
    judge = LocalJudge(runtime=pool.get(bundled_path))
    s = judge.score(sc, mia, "That sounds lonely. What do you miss most about home?")
    assert set(s.values) == set(DIMENSIONS) and all(1.0 <= v <= 5.0 for v in s.values.values())
    assert json.loads(s.raw).keys() == set(DIMENSIONS)
    assert judge.score(sc, mia, "").mean == 1.0


@pytest.mark.slow
@pytest.mark.model
def test_local_judge_grammar_mode_writes_schema_json(case, pool, bundled_path):
    sc, mia = case
    s = LocalJudge(runtime=pool.get(bundled_path), mode="grammar").score(
        sc, mia, "I'm here for you."
    )
    data = json.loads(s.raw)
    assert list(data) == list(DIMENSIONS) and all(v in (1, 2, 3, 4, 5) for v in data.values())
