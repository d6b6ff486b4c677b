"""The official `openai` Python SDK (with Pydantic) against a running chatd: test/openai/python.test.ts runs this
with CHATD_BASE_URL (…/v1) and CHATD_TOKEN and reads one `ok <name>` line per check; any failure exits non-zero
with its traceback. The scripted model answers the `{"script": …}` messages, so no provider key is needed."""
import json
import os
import time
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


def check_parse():
    parsed = client.responses.parse(model="scripted", input=finalize(REPORT), text_format=Report)
    assert parsed.status == "completed", parsed.status
    report = parsed.output_parsed
    assert isinstance(report, Report), report
    assert report.count == BIG, report.count  # every digit: output_text is the receipt's exact valueJson
    assert report.note is None and report.kind == "b" and report.tags == ["x", "y"], report
    assert parsed.output_text == REPORT, parsed.output_text


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


for check in (check_parse, check_background_retrieve_cancel, check_chat_completions_parse, check_errors):
    check()
    print("ok", check.__name__.removeprefix("check_"), flush=True)
