"""Drive `thoughtscope serve` with the official OpenAI Python client, as an application
would: a plain and a streamed answer, the method chosen by the model name, parameters in
extra_body, the session header, and a refused key. Prints one JSON object of what it saw.

    python client.py BASE_URL API_KEY
"""

import json
import sys

import openai

base_url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0)
seen = {}

models = client.models.list()
seen["models"] = [m.id for m in models.data]

raw = client.chat.completions.with_raw_response.create(
    model="tot-bfs@sim",
    messages=[{"role": "user", "content": "4 9 10 13"}],
    extra_body={"thoughtscope": {"task": "game24", "breadth": 3}},
)
plain = raw.parse()
seen["plain"] = {
    "content": plain.choices[0].message.content,
    "finish_reason": plain.choices[0].finish_reason,
    "total_tokens": plain.usage.total_tokens,
    "session": raw.headers.get("x-thoughtscope-session"),
    "request_id": raw.headers.get("x-request-id"),
}

stream = client.chat.completions.create(
    model="cot-sc@sim",
    messages=[{"role": "user", "content": "4 9 10 13"}],
    stream=True,
    stream_options={"include_usage": True},
    extra_body={"thoughtscope": {"task": "game24", "samples": 4}},
)
text, finish, usage = [], None, None
for chunk in stream:
    if chunk.choices:
        if chunk.choices[0].delta.content:
            text.append(chunk.choices[0].delta.content)
        finish = chunk.choices[0].finish_reason or finish
    if chunk.usage:
        usage = chunk.usage.total_tokens
seen["streamed"] = {"content": "".join(text), "finish_reason": finish, "total_tokens": usage}

try:
    openai.OpenAI(base_url=base_url, api_key="wrong", max_retries=0).models.list()
    seen["wrong_key"] = "accepted"
except openai.AuthenticationError as e:
    seen["wrong_key"] = e.status_code

try:
    client.chat.completions.create(
        model="cot-sc@sim",
        messages=[{"role": "user", "content": "4 9 10 13"}],
        extra_body={"thoughtscope": {"task": "game24", "samples": 0}},
    )
    seen["bad_parameter"] = "accepted"
except openai.BadRequestError as e:
    seen["bad_parameter"] = e.code

# The Responses API, plain and streamed: the same searches behind POST /v1/responses.
raw = client.responses.with_raw_response.create(
    model="tot-bfs@sim",
    instructions="Solve the Game of 24.",
    input="4 9 10 13",
    extra_body={"thoughtscope": {"task": "game24", "breadth": 2}},
)
response = raw.parse()
seen["responses_plain"] = {
    "text": response.output_text,
    "status": response.status,
    "object": response.object,
    "output_tokens": response.usage.output_tokens,
    "session": raw.headers.get("x-thoughtscope-session"),
}

events, text, final = [], [], None
with client.responses.stream(
    model="cot-sc@sim",
    input=[{"role": "user", "content": [{"type": "input_text", "text": "4 9 10 13"}]}],
    extra_body={"thoughtscope": {"task": "game24", "samples": 3}},
) as stream:
    for event in stream:
        events.append(event.type)
        if event.type == "response.output_text.delta":
            text.append(event.delta)
    final = stream.get_final_response()
seen["responses_streamed"] = {
    "text": "".join(text),
    "final_text": final.output_text,
    "status": final.status,
    "first": events[0],
    "last": events[-1],
    "total_tokens": final.usage.total_tokens,
}

try:
    client.responses.create(model="cot-sc@sim", input="4 9 10 13", reasoning={"effort": "extreme"})
    seen["bad_effort"] = "accepted"
except openai.BadRequestError as e:
    seen["bad_effort"] = e.code

try:
    client.responses.create(model="cot-sc@sim", input="4 9 10 13", reasoning={"effort": "low"},
                            extra_body={"thoughtscope": {"task": "game24"}})
    seen["sim_effort"] = "accepted"
except openai.BadRequestError as e:
    seen["sim_effort"] = e.code

print(json.dumps(seen))
