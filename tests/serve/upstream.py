"""Drive `thoughtscope serve --provider openai` with the official OpenAI Python client,
against a scripted upstream: a bare model name is the model (one upstream completion,
the conversation and sampling fields passed through), and an upstream that dies in the
middle of a search is an APIStatusError 502 (streamed: an APIError from the error event).
Prints one JSON object of what it saw.

    python upstream.py BASE_URL API_KEY
"""

import json
import sys

import openai

base_url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0)
seen = {}

raw = client.chat.completions.with_raw_response.create(
    model="fake-model",
    messages=[
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "What is the capital of France?"},
    ],
    temperature=0.5,
    max_tokens=20,
    seed=3,
)
plain = raw.parse()
seen["bare"] = {
    "content": plain.choices[0].message.content,
    "choices": len(plain.choices),
    "prompt_tokens": plain.usage.prompt_tokens,
    "completion_tokens": plain.usage.completion_tokens,
    "session": raw.headers.get("x-thoughtscope-session"),
}

doomed = [{"role": "user", "content": "A doomed question?"}]
try:
    client.chat.completions.create(model="tot-bfs@fake-model", messages=doomed, extra_body={"thoughtscope": {"breadth": 1}})
    seen["dead"] = "answered"
except openai.APIStatusError as e:
    seen["dead"] = {"status": e.status_code, "code": e.code, "class": type(e).__name__}

try:
    stream = client.chat.completions.create(
        model="tot-bfs@fake-model", messages=doomed, stream=True, extra_body={"thoughtscope": {"breadth": 1}}
    )
    for _ in stream:
        pass
    seen["dead_streamed"] = "answered"
except openai.APIError as e:
    seen["dead_streamed"] = {"code": e.code, "message": e.message}

print(json.dumps(seen))
