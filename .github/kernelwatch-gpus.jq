# The GPU models of .github/kernelwatch-gpus.json, checked, as the matrices of the GPU jobs:
# the plan job of gpu.yml, nightly.yml and baseline.yml runs it (docs/ci.md, "GPU runners").
# $gpu: one model's name (baseline.yml's input), else "".
def fail($why): "kernelwatch: error: .github/kernelwatch-gpus.json: \($why) (docs/ci.md, \"GPU runners\")\n" | halt_error(2);
def name: type == "string" and test("^[A-Za-z0-9._-]+$");
def model:
  if type == "object" and keys == ["baseline", "gpu", "nightly", "pull-requests", "runs-on", "shards"]
    and (.gpu | name) and (.["runs-on"] | type == "array" and length > 0 and all(name))
    and (.baseline | . == null or type == "string" and test("^[a-z0-9][a-z0-9-]*$"))
    and (.shards | type == "number" and . >= 1 and . == floor)
    and all(.["pull-requests"], .nightly; type == "boolean")
  then . else fail("not a model: \(tojson); a model is {\"gpu\": NAME, \"runs-on\": [LABEL, ...], \"baseline\": FOLDER or null, \"shards\": N, \"pull-requests\": true or false, \"nightly\": true or false}") end
  | if .baseline == null and (.["pull-requests"] or .nightly)
    then fail("\(.gpu) is enabled without a baseline: run the baseline workflow first") else . end;
(try ([inputs] | if length == 1 then .[0] else error("\(length) JSON documents") end) catch fail("not one JSON document: \(.)"))
| (if type == "object" and (.models | type) == "array" then .models | map(model) else fail("no list \"models\"") end) as $models
| ($models | group_by(.gpu) | map(select(length > 1)[0].gpu)) as $twice
| if $twice != [] then fail("more than one model is \($twice | join(", "))") else . end
| if $gpu == "" then empty
  else $models | map(select(.gpu == $gpu))[0] // fail("no GPU model \($gpu | tojson); its models: \($models | map(.gpu) | join(", "))")
  | "gpu=\(.gpu)", "labels=\(.["runs-on"] | tojson)", "baseline=\(.baseline // "")" end,
  "pull-requests=\($models | map(select(.["pull-requests"]) | {gpu, labels: .["runs-on"], baseline}) | tojson)",
  "nightly=\($models | map(select(.nightly) | {gpu, baseline, shards}) | tojson)",
  "shards=\([$models[] | select(.nightly) | range(1; .shards + 1) as $k | {gpu, labels: .["runs-on"], shard: $k, shards}] | tojson)"
