"""Warm latency of `elroy serve` (docs/performance.md, "elroy serve").

python3 tests/data/serve_latency.py ELROY_BINARY MODEL_DIR [MEMORIES] [RUNS]

Starts an instant OpenAI-compatible mock model on loopback and `elroy serve` on a new temporary home
with the built-in embedder (MODEL_DIR: all-MiniLM-L6-v2), fills the home with MEMORIES (700)
memories through /mcp (create_memory), then measures over one warm MCP session RUNS (51) calls of
examine_memories, and RUNS non-streaming chat turns (each a full elroy turn: recall, due items, the
upstream request, the reply stored). Prints the medians; the turn overhead is the turn's time
minus the mock's own handling time. Standard library only.
"""

import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

KEY = "latency-key-0123456789"
WORDS = ("garden budget meeting tomato sister lisbon bike train invoice recipe dentist "
         "piano laptop holiday passport insurance marathon garage tax novel").split()

upstream_seconds = []


class Mock(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        started = time.perf_counter()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = "Noted."
        if body.get("stream"):
            chunks = [
                {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
            payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            kind = "text/event-stream"
        else:
            payload = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                               "finish_reason": "stop"}]})
            kind = "application/json"
        data = payload.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        upstream_seconds.append(time.perf_counter() - started)


def post(addr, path, body, headers=None):
    request = urllib.request.Request(f"http://{addr}{path}", data=json.dumps(body).encode(), method="POST")
    request.add_header("Authorization", f"Bearer {KEY}")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    with urllib.request.urlopen(request) as response:
        return response.headers, response.read().decode()


def rpc(text):
    for line in text.splitlines():
        if line.startswith("data:") and '"id"' in line:
            return json.loads(line[5:])
    return json.loads(text)


def main():
    binary, model = sys.argv[1], sys.argv[2]
    memories = int(sys.argv[3]) if len(sys.argv) > 3 else 700
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 51
    mock = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Mock)
    threading.Thread(target=mock.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as root:
        home = os.path.join(root, ".elroy")
        os.makedirs(home)
        with open(os.path.join(home, "elroy.conf.yaml"), "w") as f:
            f.write(f"chat_model: mock-model\nchat_model_api_base: http://127.0.0.1:{mock.server_port}/v1\n"
                    f"embedding_model: builtin\nembedding_model_path: {model}\nmessages_between_memory: 0\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ELROY_")}
        env.update(HOME=root, ELROY_HOME=home, ELROY_SERVE_KEY=KEY, TZ="UTC0")
        server = subprocess.Popen([binary, "serve", "--bind", "127.0.0.1:0"], env=env, cwd=root,
                                  stderr=subprocess.PIPE, text=True)
        try:
            addr = server.stderr.readline().split("http://")[1].split()[0]
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            headers, text = post(addr, "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "latency", "version": "1"}}})
            session = {"Mcp-Session-Id": headers["mcp-session-id"]}
            post(addr, "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)

            def call(i, name, arguments):
                started = time.perf_counter()
                _, text = post(addr, "/mcp", {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                                              "params": {"name": name, "arguments": arguments}}, session)
                elapsed = time.perf_counter() - started
                result = rpc(text)["result"]
                assert not result.get("isError"), result
                return elapsed

            started = time.perf_counter()
            for i in range(memories):
                words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(4)]
                call(i, "create_memory", {"name": f"Note {i} about {words[0]} and {words[1]}",
                                          "text": f"Memory {i}: the {words[0]} and the {words[1]} relate to "
                                                  f"{words[2]}, said on day {i % 31 + 1}; {words[3]} later."})
            fill = time.perf_counter() - started
            call(0, "examine_memories", {"question": "What do I know about the garden?"})  # warm-up
            examine = [call(memories + i, "examine_memories",
                            {"question": f"What do I know about the {WORDS[i % len(WORDS)]}?"})
                       for i in range(runs)]
            turns = []
            upstream_seconds.clear()
            for i in range(runs):
                started = time.perf_counter()
                post(addr, "/v1/chat/completions", {"model": "elroy", "messages": [
                    {"role": "user", "content": f"Tell me about the {WORDS[i % len(WORDS)]}"}]},
                    {"X-Elroy-Session": "latency"})
                turns.append(time.perf_counter() - started)
            overhead = [t - u for t, u in zip(turns, upstream_seconds)]
            print(f"memories: {memories} created through /mcp in {fill:.1f} s")
            print(f"examine_memories via /mcp: median {statistics.median(examine) * 1000:.1f} ms "
                  f"(min {min(examine) * 1000:.1f}, max {max(examine) * 1000:.1f}) over {runs} calls")
            print(f"chat turn: median {statistics.median(turns) * 1000:.1f} ms; overhead over the mock "
                  f"upstream median {statistics.median(overhead) * 1000:.1f} ms over {runs} turns")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
