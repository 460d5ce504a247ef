// Exchanges: a parsed request to its responder, the answer to the wire.

extension EventLoop {
    /// Hands a parsed request to the responder: inline when it allows, else to a worker.
    func startRequest(_ connection: Connection, _ request: HTTPRequest) {
        let requestID = RequestIDGenerator.accepted(request.headers["X-Request-Id"]) ?? requestIDs.next()
        connection.current = Exchange(
            method: request.method, path: request.path, requestID: requestID, startedAt: now,
            isHEAD: request.method == "HEAD", http10: request.version == .http1_0)
        var context = RequestContext(
            requestID: requestID, remoteAddress: connection.remoteAddress, logger: shared.logger, receivedAt: now)
        let inline = shared.responder.runsInline(request)
        connection.state.requestParsed(keepAlive: request.keepAlive, inline: inline)
        if inline {
            shared.inFlightRequests.add(1, ordering: .relaxed)
            let response = shared.answer(request, context: context)
            shared.inFlightRequests.subtract(1, ordering: .relaxed)
            finish(connection, response)
            return
        }
        // Kept so that the exchange can be answered again if its handler parks it.
        connection.current?.request = request
        context.exchange = ExchangeAddress(handle: handle, fd: connection.fd, serial: connection.serial)
        dispatch(request, context: context, to: connection)
    }

    /// Runs the responder for `request` on a worker and posts its answer back.
    func dispatch(_ request: consuming HTTPRequest, context: RequestContext, to connection: Connection) {
        let shared = self.shared
        let fd = connection.fd
        let serial = connection.serial
        let handle = self.handle
        shared.inFlightRequests.add(1, ordering: .relaxed)
        // Urgency only reorders waiting jobs: an idle pool skips the test.
        var request = request
        let urgent = shared.workers.isBacklogged && (shared.configuration.urgent?(&request) ?? false)
        shared.workers.submit(urgent: urgent) { [request] in
            let response = shared.answer(request, context: context)
            shared.inFlightRequests.subtract(1, ordering: .relaxed)
            handle.post(.response(fd: fd, serial: serial, response))
        }
    }

    /// Answers a refused request with its problem; closes after it when the error says so.
    /// Its line is written here, always: no responder (nor the app's request log) sees a
    /// request refused before it was whole, and an operator looks for a slowloris or a
    /// prober by these lines and the `X-Request-Id` each answer carries.
    func refuse(_ connection: Connection, _ error: HTTPError) {
        let requestID = requestIDs.next()
        connection.current = Exchange(
            method: "-", path: "-", requestID: requestID, startedAt: now, isHEAD: false, http10: false)
        connection.state.refusing(close: error.closeConnection)
        let response = shared.configuration.refusal(error)
        shared.logger.info(
            "request refused",
            metadata: [
                "request_id": "\(requestID)", "remote": "\(connection.remoteAddress)",
                "status": .stringConvertible(response.status), "reason": "\(error.detail)",
            ])
        finish(connection, response)
    }

    /// Serializes a response for the current exchange and queues it.
    func finish(_ connection: Connection, _ response: HTTPResponse) {
        // An open stream takes every answer as its continuation.
        if connection.parking?.stream != nil {
            finishParked(connection, response)
            return
        }
        if !response.isParked { connection.parking = nil }
        guard var exchange = connection.current else { return }
        exchange.status = response.status
        let noBody = HTTPStatus.forbidsBody(response.status)
        var head: [UInt8] = []
        switch response.body {
        case .bytes(let bytes):
            let keepAlive = connection.state.responseStarted(stopping: stopping, closeDelimited: false, streams: false)
            // Room for the head and a body small enough to share its send: one allocation, no regrowth.
            head.reserveCapacity(512 + (bytes.count <= 16 * 1024 ? bytes.count : 0))
            ResponseSerializer.writeHead(
                status: response.status, headers: response.headers, framing: noBody ? .none : .length(bytes.count),
                keepAlive: keepAlive, http10: exchange.http10, requestID: exchange.requestID, date: date.bytes,
                server: shared.serverField, into: &head)
            let sendBody = !noBody && !exchange.isHEAD && !bytes.isEmpty
            if sendBody && bytes.count <= 16 * 1024 { head.append(contentsOf: bytes) }
            connection.enqueue(head)
            if sendBody && bytes.count > 16 * 1024 {
                connection.outBody = bytes
                connection.outBodyOffset = 0
            }
            exchange.bodyBytes = sendBody ? bytes.count : 0
            connection.current = exchange
            complete(connection)
        case .stream(let producer):
            // HTTP/1.0 has no chunked coding: the body ends with the connection.
            head.reserveCapacity(512)
            let framing: ResponseFraming = noBody ? .none : (exchange.http10 ? .closeDelimited : .chunked)
            let streams = !noBody && !exchange.isHEAD
            let keepAlive = connection.state.responseStarted(
                stopping: stopping, closeDelimited: framing == .closeDelimited, streams: streams)
            ResponseSerializer.writeHead(
                status: response.status, headers: response.headers, framing: framing, keepAlive: keepAlive,
                http10: exchange.http10, requestID: exchange.requestID, date: date.bytes, server: shared.serverField,
                into: &head)
            connection.enqueue(head)
            connection.current = exchange
            if streams {
                startPump(connection, producer, chunked: framing == .chunked)
            } else {
                complete(connection)
            }
        case .parked:
            finishParked(connection, response)
        }
    }

    /// The exchange is fully queued: log it and get ready for the next request.
    func complete(_ connection: Connection) {
        if let exchange = connection.current, shared.configuration.accessLog { logAccess(exchange) }
        connection.current = nil
        connection.state.responseQueued(now: now)
    }

    private func logAccess(_ exchange: Exchange) {
        let micros = Int((MonotonicClock.now() - exchange.startedAt) * 1_000_000)
        shared.logger.info(
            "\(exchange.method) \(exchange.path) \(exchange.status) \(exchange.bodyBytes)B \(micros)us id=\(exchange.requestID)")
    }

    /// Runs a body producer on a worker; each segment waits until the loop has written it.
    private func startPump(_ connection: Connection, _ producer: @escaping HTTPBodyProducer, chunked: Bool) {
        let fd = connection.fd
        let serial = connection.serial
        let handle = self.handle
        shared.workers.submit {
            let channel = StreamChannel()
            var writer = HTTPBodyWriter(chunked: chunked) { segment in
                guard handle.post(.segment(fd: fd, serial: serial, segment, channel)) else { throw StreamCancelled() }
                channel.acknowledged.wait()
                if channel.cancelled.load(ordering: .relaxed) { throw StreamCancelled() }
            }
            var failed = false
            do {
                try producer(&writer)
                try writer.finish()
            } catch {
                failed = true
            }
            handle.post(.streamEnd(fd: fd, serial: serial, failed: failed, bytes: writer.bytesWritten))
        }
    }
}

/// The client went away while a body was being streamed.
struct StreamCancelled: Error {}
