-- wrk script: kube-scheduler's extender calls against `seedance server`, alternating
-- /extender/filter and /extender/prioritize for a 1-GPU pod (node-cache mode: NodeNames only, as
-- kube-scheduler sends with nodeCacheCapable: true).
-- Environment: SEEDANCE_NODES (default 1000; node names gpu-node-0000 ... as bench-server.sh
-- registers them) and SEEDANCE_NAMES, the names per request (default: all nodes). kube-scheduler
-- sends an extender the feasible nodes it found, at most numFeasibleNodesToFind(N): with
-- percentageOfNodesToScore unset, max(100, N x max(5, 50 - N/125) / 100), i.e. 500 of 5,000
-- (k8s.io/kubernetes pkg/scheduler/schedule_one.go); it starts each search where the previous one
-- stopped (nextStartNodeIndex), so the window here rotates by that many names per pod.
local n = tonumber(os.getenv("SEEDANCE_NODES") or "1000")
local per = tonumber(os.getenv("SEEDANCE_NAMES") or tostring(n))
local names = {}
for i = 0, n - 1 do names[#names + 1] = string.format('"gpu-node-%04d"', i) end
-- One list per window start (n / per of them, or one when every name is sent).
local windows = {}
local starts = (per >= n) and 1 or math.floor(n / per)
for w = 0, starts - 1 do
  local list = {}
  for i = 0, per - 1 do list[#list + 1] = names[((w * per + i) % n) + 1] end
  windows[#windows + 1] = "[" .. table.concat(list, ",") .. "]"
end
local counter = 0

local function args(pod, node_names)
  return '{"Pod":{"metadata":{"name":"' .. pod .. '","namespace":"team-a","uid":"uid-' .. pod ..
         '"},"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"4","memory":"16Gi",' ..
         '"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]},"status":{}},"Nodes":null,"NodeNames":' ..
         node_names .. '}'
end

request = function()
  counter = counter + 1
  local verb = (counter % 2 == 0) and "/extender/prioritize" or "/extender/filter"
  local pod = math.floor(counter / 2)
  local body = args("bench-pod-" .. pod, windows[(pod % #windows) + 1])
  return wrk.format("POST", verb, {["Content-Type"] = "application/json"}, body)
end

done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write +
                 summary.errors.status + summary.errors.timeout
  io.write(string.format('RESULT {"requests":%d,"duration_s":%.3f,"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,' ..
                         '"max_ms":%.3f,"errors":%d,"non2xx":%d}\n',
                         summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
                         latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
                         errors, summary.errors.status))
end
