-- wrk script: kube-scheduler's extender calls against `seedance server`, alternating
-- /extender/filter and /extender/prioritize for a 1-GPU pod over all N nodes (node-cache mode:
-- NodeNames only, as kube-scheduler sends with nodeCacheCapable: true).
-- Environment: SEEDANCE_NODES (default 1000), node names gpu-node-0000 ... as bench-server.sh
-- registers them.
local n = tonumber(os.getenv("SEEDANCE_NODES") or "1000")
local names = {}
for i = 0, n - 1 do names[#names + 1] = string.format('"gpu-node-%04d"', i) end
local node_names = "[" .. table.concat(names, ",") .. "]"
local counter = 0

local function args(pod)
  return '{"Pod":{"metadata":{"name":"' .. pod .. '","namespace":"team-a","uid":"uid-' .. pod ..
         '"},"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"4","memory":"16Gi",' ..
         '"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]},"status":{}},"Nodes":null,"NodeNames":' ..
         node_names .. '}'
end

request = function()
  counter = counter + 1
  local verb = (counter % 2 == 0) and "/extender/prioritize" or "/extender/filter"
  local body = args("bench-pod-" .. math.floor(counter / 2))
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
