"""The official `openai` Python SDK (with Pydantic) against a running chatd: test/openai/python.test.ts runs this
with CHATD_BASE_URL (…/v1) and CHATD_TOKEN and reads one `ok <name>` line per check; any failure exits non-zero
with its traceback. The scripted model answers the `{"script": …}` messages, so no provider key is needed.
`sdk_check.py webhook` instead verifies one delivery chatd sent (CHATD_WEBHOOK_BODY, _HEADERS as JSON, _SECRET)
with `client.webhooks.unwrap` and retrieves the Response it names."""
import json
import os
import sys
import time
from decimal import Decimal
from enum import Enum
from typing import Literal, Optional

import openai
from openai import OpenAI
from pydantic import BaseModel

client = OpenAI(base_url=os.environ["CHATD_BASE_URL"], api_key=os.environ["CHATD_TOKEN"], max_retries=0)
BIG = 123456789012345678901234567890


class Report(BaseModel):
    count: int
    note: Optional[str]
    kind: Literal["a", "b"]
    tags: list[str]


def finalize(output_json: str, delay_ms: int = 0) -> str:
    step = {"tool_calls": [{"name": "coder_structured_output", "args_raw": '{"output":' + output_json + "}"}]}
    if delay_ms:
        step["delay_ms"] = delay_ms
    return json.dumps({"script": [step]})


# In jsonb's key order and spacing, so the stored valueJson is this very text.
REPORT = '{"kind": "b", "note": null, "tags": ["x", "y"], "count": %d}' % BIG


def settled(response_id: str):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        response = client.responses.retrieve(response_id)
        if response.status not in ("queued", "in_progress"):
            return response
        time.sleep(0.05)
    raise AssertionError(f"{response_id} did not finish within 30 s")


class Kind(str, Enum):
    retail = "retail"
    wholesale = "wholesale"


class Line(BaseModel):
    sku: str
    price: Decimal
    quantity: int


class Order(BaseModel):
    number: int
    kind: Kind
    customer: Optional[str]
    lines: list[Line]
    total: Decimal


class Node(BaseModel):
    name: str
    children: list["Node"]


# Decimals as JSON strings: Pydantic reads a JSON number into Decimal through a float.
ORDER = ('{"kind": "wholesale", "lines": [{"sku": "A-1", "price": "0.10", "quantity": 3}, '
         '{"sku": "B-2", "price": "19.99", "quantity": %d}], "total": "12345678901234567890.30", '
         '"number": 7, "customer": null}' % BIG)
TREE = '{"name": "root", "children": [{"name": "leaf", "children": [{"name": "deeper", "children": []}]}]}'
WEATHER_TOOL = {"type": "function", "name": "get_weather", "description": "The weather in a city", "strict": True,
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                               "additionalProperties": False}}


class Weather(BaseModel):
    celsius: int


def check_parse():
    parsed = client.responses.parse(model="scripted", input=finalize(REPORT), text_format=Report)
    assert parsed.status == "completed", parsed.status
    report = parsed.output_parsed
    assert isinstance(report, Report), report
    assert report.count == BIG, report.count  # every digit: output_text is the receipt's exact valueJson
    assert report.note is None and report.kind == "b" and report.tags == ["x", "y"], report
    assert parsed.output_text == REPORT, parsed.output_text


def check_parse_nested():
    order = client.responses.parse(model="scripted", input=finalize(ORDER), text_format=Order).output_parsed
    assert isinstance(order, Order), order
    assert order.kind is Kind.wholesale and order.customer is None and order.number == 7, order
    assert order.lines == [Line(sku="A-1", price=Decimal("0.10"), quantity=3),
                           Line(sku="B-2", price=Decimal("19.99"), quantity=BIG)], order.lines
    assert order.total == Decimal("12345678901234567890.30"), order.total
    tree = client.responses.parse(model="scripted", input=finalize(TREE), text_format=Node).output_parsed
    assert tree == Node(name="root", children=[Node(name="leaf", children=[Node(name="deeper", children=[])])]), tree


def check_stream_resume():
    with client.responses.stream(model="scripted", input=finalize(ORDER, delay_ms=200), text_format=Order) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert events[0].type == "response.created" and events[-1].type == "response.completed", [e.type for e in events]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert final.output_parsed.total == Decimal("12345678901234567890.30"), final.output_parsed
    # The raw replay after sequence number 3 repeats the same events; the helper resumes from it too.
    replay = list(client.responses.retrieve(final.id, stream=True, starting_after=3))
    assert [(e.type, e.sequence_number) for e in replay] == [(e.type, e.sequence_number) for e in events[4:]], replay
    with client.responses.stream(response_id=final.id, starting_after=3, text_format=Order) as resumed:
        again = list(resumed)
        parsed = resumed.get_final_response().output_parsed
    assert [e.sequence_number for e in again] == list(range(4, len(events))), [e.sequence_number for e in again]
    assert parsed == final.output_parsed, parsed


def check_function_tool_round_trip():
    script = json.dumps({"script": [
        {"tool_calls": [{"name": "get_weather", "args_raw": '{"city":"Paris"}'}]},
        {"tool_calls": [{"name": "coder_structured_output", "args_raw": '{"output":{"celsius":18}}'}]}]})
    first = client.responses.parse(model="scripted", input=script, tools=[WEATHER_TOOL], text_format=Weather)
    assert first.status == "completed", first.status
    [call] = [item for item in first.output if item.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments) == {"city": "Paris"}, call
    assert first.output_parsed is None
    second = client.responses.parse(model="scripted", previous_response_id=first.id, tools=[WEATHER_TOOL],
                                    text_format=Weather,
                                    input=[{"type": "function_call_output", "call_id": call.call_id, "output": "18"}])
    assert second.previous_response_id == first.id and second.id != first.id, second
    assert second.output_parsed == Weather(celsius=18), second.output_parsed


def check_follow_up():
    first = client.responses.parse(model="scripted", input=finalize(REPORT), text_format=Report)
    follow = client.responses.create(model="scripted", previous_response_id=first.id, input=finalize('"and then"'))
    assert follow.output_text == "and then" and follow.previous_response_id == first.id, follow
    assert follow.model_extra["chat_id"] == first.model_extra["chat_id"], (follow.model_extra, first.model_extra)


def check_background_retrieve_cancel():
    created = client.responses.create(model="scripted", background=True, input=finalize('"later"'))
    assert created.status in ("queued", "in_progress"), created.status
    done = settled(created.id)
    assert done.status == "completed" and done.output_text == "later", done
    slow = client.responses.create(model="scripted", background=True, input=finalize('"never"', delay_ms=60_000))
    cancelled = client.responses.cancel(slow.id)
    assert cancelled.status in ("cancelled", "in_progress"), cancelled.status
    assert settled(slow.id).status == "cancelled"
    assert client.responses.cancel(slow.id).status == "cancelled"


def check_chat_completions_parse():
    completion = client.chat.completions.parse(model="scripted", response_format=Report,
                                               messages=[{"role": "user", "content": finalize(REPORT)}])
    message = completion.choices[0].message
    assert message.refusal is None, message.refusal
    assert message.parsed is not None and message.parsed.count == BIG, message
    assert completion.choices[0].finish_reason == "stop"


def check_errors():
    try:
        client.responses.create(model="no-such-model", input="x")
    except openai.BadRequestError as error:
        assert error.code == "model_not_found" and error.param == "model", (error.code, error.param)
    else:
        raise AssertionError("an unknown model was accepted")
    try:
        client.responses.retrieve("resp_" + "0" * 32)
    except openai.NotFoundError:
        pass
    else:
        raise AssertionError("an unknown id was found")


def check_webhook():
    body = os.environ["CHATD_WEBHOOK_BODY"]
    headers = json.loads(os.environ["CHATD_WEBHOOK_HEADERS"])
    event = client.webhooks.unwrap(body, headers, secret=os.environ["CHATD_WEBHOOK_SECRET"])
    assert event.type == "response.completed", event.type
    assert client.responses.retrieve(event.data.id).status == "completed"
    try:
        client.webhooks.unwrap(body.replace("response.completed", "response.failed"), headers,
                               secret=os.environ["CHATD_WEBHOOK_SECRET"])
    except openai.InvalidWebhookSignatureError:
        pass
    else:
        raise AssertionError("a tampered body was accepted")


CHECKS = (check_parse, check_parse_nested, check_stream_resume, check_function_tool_round_trip, check_follow_up,
          check_background_retrieve_cancel, check_chat_completions_parse, check_errors)
for check in (check_webhook,) if sys.argv[1:] == ["webhook"] else CHECKS:
    check()
    print("ok", check.__name__.removeprefix("check_"), flush=True)
