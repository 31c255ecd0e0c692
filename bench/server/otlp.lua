-- wrk script: OTLP/HTTP JSON ingest at POST /v1/metrics. Each request carries one
-- ExportMetricsServiceRequest of SEEDANCE_OTLP_POINTS (default 1000) gauge data points: 8 GPUs x
-- DCGM-style metrics on distinct nodes, timestamps advancing per request so every point is new.
-- Environment: SEEDANCE_TOKEN (bearer token, optional).
local points = tonumber(os.getenv("SEEDANCE_OTLP_POINTS") or "1000")
local token = os.getenv("SEEDANCE_TOKEN")
local counter = 0
local base_ns = 1795950000 * 1000000000
local metrics = {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP"}

local function body(seq)
  local ts = string.format("%d", base_ns + seq * 1000000000)
  local per_metric = math.floor(points / #metrics)
  local ms = {}
  for m = 1, #metrics do
    local dps = {}
    for i = 0, per_metric - 1 do
      dps[#dps + 1] = '{"asDouble":' .. ((seq + i) % 100) .. ',"timeUnixNano":"' .. ts ..
        '","attributes":[{"key":"Hostname","value":{"stringValue":"node-' .. math.floor(i / 8) ..
        '"}},{"key":"gpu","value":{"stringValue":"' .. (i % 8) .. '"}}]}'
    end
    ms[#ms + 1] = '{"name":"' .. metrics[m] .. '","unit":"1","gauge":{"dataPoints":[' .. table.concat(dps, ",") .. ']}}'
  end
  return '{"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"dcgm"}}]},' ..
         '"scopeMetrics":[{"scope":{"name":"bench"},"metrics":[' .. table.concat(ms, ",") .. ']}]}]}'
end

request = function()
  counter = counter + 1
  local headers = {["Content-Type"] = "application/json"}
  if token then headers["Authorization"] = "Bearer " .. token end
  return wrk.format("POST", "/v1/metrics", headers, body(counter))
end

done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write +
                 summary.errors.status + summary.errors.timeout
  local per_metric = math.floor(points / #metrics)
  local rps = summary.requests / (summary.duration / 1e6)
  io.write(string.format('RESULT {"requests":%d,"duration_s":%.3f,"rps":%.1f,"samples_per_request":%d,' ..
                         '"samples_per_s":%.0f,"p50_ms":%.3f,"p99_ms":%.3f,"errors":%d,"non2xx":%d}\n',
                         summary.requests, summary.duration / 1e6, rps, per_metric * #metrics,
                         rps * per_metric * #metrics, latency:percentile(50) / 1000,
                         latency:percentile(99) / 1000, errors, summary.errors.status))
end
