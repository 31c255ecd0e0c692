-- wrk script: OTLP/HTTP JSON ingest at POST /v1/metrics. Each request carries one
-- ExportMetricsServiceRequest of SEEDANCE_OTLP_POINTS (default 8192, the OpenTelemetry collector batch
-- processor's send_batch_size) gauge data points: 8 GPUs x
-- DCGM-style metrics on distinct nodes, timestamps advancing per request so every point is new.
-- Environment: SEEDANCE_TOKEN (bearer token, optional).
local points = tonumber(os.getenv("SEEDANCE_OTLP_POINTS") or "8192")
local token = os.getenv("SEEDANCE_TOKEN")
local counter = 0
local base_ns = 1795950000 * 1000000000
local metrics = {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP"}

-- The body is built once as pieces around the timestamp; each request joins them with its own
-- timestamp (one C-level concat), so the client costs little CPU beside the server.
local pieces = nil
local function template()
  local per_metric = math.floor(points / #metrics)
  local parts = {}
  local cur = '{"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"dcgm"}}]},' ..
              '"scopeMetrics":[{"scope":{"name":"bench"},"metrics":['
  for m = 1, #metrics do
    cur = cur .. (m > 1 and "," or "") .. '{"name":"' .. metrics[m] .. '","unit":"1","gauge":{"dataPoints":['
    for i = 0, per_metric - 1 do
      cur = cur .. (i > 0 and "," or "") .. '{"asDouble":' .. (i % 100) .. ',"timeUnixNano":"'
      parts[#parts + 1] = cur
      cur = '","attributes":[{"key":"Hostname","value":{"stringValue":"node-' .. math.floor(i / 8) ..
            '"}},{"key":"gpu","value":{"stringValue":"' .. (i % 8) .. '"}}]}'
    end
    cur = cur .. ']}}'
  end
  parts[#parts + 1] = cur .. ']}]}]}'
  return parts
end

local function body(seq)
  if pieces == nil then pieces = template() end
  return table.concat(pieces, string.format("%d", base_ns + seq * 1000000000))
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
