import Ferry
import Testing

/// The exposition writer without a server: escaping and histogram shape.
@Suite struct PrometheusTextTests {
    @Test func labelValuesAndHelpAreEscaped() throws {
        var text = PrometheusText()
        text.family("x_total", type: .counter, help: "a \\ b\nc")
        text.sample("x_total", labels: [("route", "a\"b\\c\nd")], value: 7)
        #expect(text.output == "# HELP x_total a \\\\ b\\nc\n# TYPE x_total counter\nx_total{route=\"a\\\"b\\\\c\\nd\"} 7\n")
        let parsed = try PrometheusSamples(text.output)
        #expect(parsed.value("x_total", ["route": "a\"b\\c\nd"]) == 7)
    }

    @Test func histogramBucketsAreCumulativeWithInfSumAndCount() throws {
        var text = PrometheusText()
        text.histogram("h", labels: [("r", "x")], bounds: [0.1, 1], counts: [2, 0, 3], sum: 7.25)
        #expect(
            text.output == """
                h_bucket{r="x",le="0.1"} 2
                h_bucket{r="x",le="1"} 2
                h_bucket{r="x",le="+Inf"} 5
                h_sum{r="x"} 7.25
                h_count{r="x"} 5

                """)
    }

    @Test func recordedLatenciesLandInTheRightBucket() throws {
        let registry = FerryMetrics()
        registry.requests.record(route: "/a", method: "GET", status: 200, seconds: 0.0005)
        registry.requests.record(route: "/a", method: "GET", status: 200, seconds: 0.003)
        registry.requests.record(route: "/a", method: "GET", status: 500, seconds: 99)
        let samples = try PrometheusSamples(registry.render())
        let bucket = "ferry_http_request_duration_seconds_bucket"
        #expect(samples.value(bucket, ["route": "/a", "le": "0.001"]) == 1)
        #expect(samples.value(bucket, ["route": "/a", "le": "0.0025"]) == 1)
        #expect(samples.value(bucket, ["route": "/a", "le": "0.005"]) == 2)
        #expect(samples.value(bucket, ["route": "/a", "le": "10"]) == 2)
        #expect(samples.value(bucket, ["route": "/a", "le": "+Inf"]) == 3)
        #expect(registry.requests.count(route: "/a", method: "GET", status: 200) == 2)
        #expect(samples.value("ferry_http_requests_total", ["route": "/a", "status": "500"]) == 1)
    }
}
