// The event loop's side of parked exchanges (HTTPParking.swift): holding one
// with no thread and no timer of its own, resuming it when its ticket is
// woken, its deadline comes or the server shuts down, and carrying an
// open-ended stream's body on, part by part, with its heartbeat. What the
// connection does next stays ConnectionState's decision (`parked`, `resumed`,
// `deferWake`, and `next` answering `.resume` or `.close`); this file performs it.

extension EventLoop {
    /// An answer that parks the exchange, or any answer to an exchange whose
    /// stream is open (which continues or ends that stream).
    func finishParked(_ connection: Connection, _ response: HTTPResponse) {
        guard var exchange = connection.current else { return }
        guard case .parked(let parking) = response.body else {
            // The last part of an open stream: its body bytes end it.
            if case .bytes(let bytes) = response.body { sendPart(connection, bytes) }
            endStream(connection)
            return
        }
        var parked =
            connection.parking
            ?? ParkedExchange(ticket: parking.ticket, stream: nil, lastSentAt: now)
        if parked.ticket !== parking.ticket {
            // A handler that took a second ticket: wakes go to the one it answered with.
            parked.ticket.abandon()
            parked.ticket = parking.ticket
        }
        parked.deadline = parking.deadline
        if let stream = parking.stream {
            parked.heartbeat = stream.heartbeat
            if parked.stream == nil {
                guard !exchange.isHEAD else {
                    // A HEAD gets the head a GET would, and no body to wait for.
                    connection.parking = nil
                    parking.ticket.abandon()
                    finish(connection, HTTPResponse(status: response.status, headers: response.headers, body: .stream { _ in }))
                    return
                }
                parked.stream = startStream(connection, &exchange, response)
            }
            connection.parking = parked
            sendPart(connection, stream.bytes)
        }
        connection.parking = parked
        connection.state.parked()
        if stopping {
            guard parked.lastReason != .shutdown else {
                // Resumed for shutdown and parked again: the server cannot wait for it.
                forceEnd(connection)
                return
            }
            resumeParked(connection, .shutdown)
        } else if !parked.ticket.settle() {
            // Woken while its handler was checking: go round again.
            resumeParked(connection, .woken)
        }
    }

    /// Sends a stream's head: chunked, or to the close for HTTP/1.0.
    private func startStream(_ connection: Connection, _ exchange: inout Exchange, _ response: HTTPResponse) -> ResponseFraming {
        let framing: ResponseFraming = exchange.http10 ? .closeDelimited : .chunked
        let keepAlive = connection.state.responseStarted(
            stopping: stopping, closeDelimited: framing == .closeDelimited, streams: false)
        var head: [UInt8] = []
        head.reserveCapacity(512)
        ResponseSerializer.writeHead(
            status: response.status, headers: response.headers, framing: framing, keepAlive: keepAlive,
            http10: exchange.http10, requestID: exchange.requestID, date: date.bytes, server: shared.serverField,
            into: &head)
        connection.enqueue(head)
        exchange.status = response.status
        connection.current = exchange
        return framing
    }

    /// Queues a part of the open stream's body, framed.
    private func sendPart(_ connection: Connection, _ bytes: [UInt8]) {
        guard !bytes.isEmpty, var parked = connection.parking, let framing = parked.stream else { return }
        if framing == .chunked {
            var framed: [UInt8] = []
            framed.reserveCapacity(bytes.count + 12)
            ChunkFraming.appendChunkHeader(count: bytes.count, to: &framed)
            framed.append(contentsOf: bytes)
            framed.append(contentsOf: ChunkFraming.crlf)
            connection.enqueue(framed)
        } else {
            connection.enqueue(bytes)
        }
        connection.current?.bodyBytes += bytes.count
        parked.lastSentAt = now
        connection.parking = parked
    }

    /// Ends the open stream (the last chunk) and the exchange.
    private func endStream(_ connection: Connection) {
        if connection.parking?.stream == .chunked { connection.enqueue(ChunkFraming.lastChunk) }
        connection.parking = nil
        complete(connection)
    }

    /// Ends an exchange that parked again at shutdown: a stream ends, a
    /// long poll gets the server's 503.
    private func forceEnd(_ connection: Connection) {
        guard let parked = connection.parking else { return }
        connection.state.resumed()
        parked.ticket.abandon()
        if parked.stream != nil {
            endStream(connection)
        } else {
            connection.parking = nil
            finish(
                connection,
                shared.configuration.refusal(
                    HTTPError(
                        status: 503, reason: .other, detail: "The server is shutting down; retry.",
                        headers: HTTPHeaders([("Retry-After", "1")]), closeConnection: true)))
        }
    }

    /// Hands a parked exchange back to the responder.
    func resumeParked(_ connection: Connection, _ reason: Resumption.Reason) {
        guard var parked = connection.parking, connection.state.isParked, let exchange = connection.current,
            let request = exchange.request
        else { return }
        // A wake has moved the ticket on already; the loop's own reasons move it here.
        if reason != .woken { parked.ticket.claimResume() }
        parked.lastReason = reason
        connection.parking = parked
        connection.state.resumed()
        var context = RequestContext(
            requestID: exchange.requestID, remoteAddress: connection.remoteAddress, logger: shared.logger,
            receivedAt: exchange.startedAt)
        context.exchange = ExchangeAddress(handle: handle, fd: connection.fd, serial: connection.serial)
        context.ticket = parked.ticket
        context.resumption = Resumption(reason: reason, streaming: parked.stream != nil)
        dispatch(request, context: context, to: connection)
    }

    /// A ticket's wake reached the loop.
    func wakeParked(fd: Int32, serial: UInt64, ticket: ParkingTicket) {
        guard let connection = connection(fd, serial: serial), connection.parking?.ticket === ticket,
            connection.state.isParked
        else { return }
        if connection.hasPendingOutput {
            // The client has not taken the last part yet: more waits until it has.
            connection.state.deferWake()
        } else {
            resumeParked(connection, .woken)
        }
    }

    /// When the parked exchange next needs the loop: its deadline, or its
    /// stream's next heartbeat (none while the last part is still being written).
    func parkedDeadline(_ connection: Connection) -> Double? {
        guard let parked = connection.parking, connection.state.isParked else { return nil }
        guard let heartbeat = parked.heartbeat, parked.stream != nil, !connection.hasPendingOutput else {
            return parked.deadline
        }
        let beat = parked.lastSentAt + heartbeat.interval
        return min(parked.deadline ?? beat, beat)
    }

    /// A parked exchange's deadline come: resumed at its deadline, or its heartbeat sent.
    func expireParked(_ connection: Connection) {
        guard let parked = connection.parking, connection.state.isParked else { return }
        if let deadline = parked.deadline, now >= deadline {
            resumeParked(connection, .deadline)
        } else if let heartbeat = parked.heartbeat, parked.stream != nil, !connection.hasPendingOutput,
            now >= parked.lastSentAt + heartbeat.interval
        {
            sendPart(connection, heartbeat.bytes)
            drive(connection)
        }
    }

    /// At shutdown every parked exchange is resumed to answer now.
    func resumeParkedForShutdown() {
        for case let connection? in connections where connection.state.isParked {
            resumeParked(connection, .shutdown)
        }
    }
}
