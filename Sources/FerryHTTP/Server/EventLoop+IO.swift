import CEpoll
import Glibc

extension EventLoop {
    enum FlushResult { case done, blocked, failed }

    /// Advances a connection as far as its input and output allow.
    /// Requests are taken one at a time, so pipelined answers stay in order.
    func drive(_ connection: Connection) {
        while true {
            if connection.hasPendingOutput {
                switch flush(connection) {
                case .failed:
                    close(connection)
                    return
                case .blocked:
                    if !watchWrites(connection, true) { close(connection) }
                    return
                case .done:
                    if connection.watchingWrites, !watchWrites(connection, false) {
                        close(connection)
                        return
                    }
                }
            }
            if let ack = connection.pendingAck {
                connection.pendingAck = nil
                ack.release(cancel: false)
            }
            if connection.closeAfterWrite && connection.phase == .reading {
                beginLinger(connection)
            }
            switch connection.phase {
            case .handling, .streaming:
                return
            case .lingering:
                drainLinger(connection)
                return
            case .reading:
                switch connection.parser.next() {
                case .request(let request):
                    startRequest(connection, request)
                case .expectContinue:
                    connection.enqueue(ResponseSerializer.continueResponse)
                case .error(let error):
                    refuse(connection, error)
                case .needMore:
                    if connection.parser.hasPartialRequest && connection.parser.isReadingHead {
                        if connection.headStartedAt == nil { connection.headStartedAt = now }
                    } else if !connection.parser.hasPartialRequest {
                        connection.headStartedAt = nil
                    }
                    if connection.readEOF {
                        // The peer is gone; an unfinished request cannot be answered.
                        close(connection)
                        return
                    }
                    guard connection.readable, readChunk(connection) else { return }
                }
            }
        }
    }

    /// Reads once into the parser; false when there is nothing more to do now.
    private func readChunk(_ connection: Connection) -> Bool {
        let n = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
        if n > 0 {
            connection.parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
            connection.lastReadAt = now
            // A short read emptied the socket, and with edge-triggered epoll new input
            // brings a new event: reading again now would only return EAGAIN, one wasted
            // system call per request. Unless the peer's end was reported, which
            // brings no further event: then read on until the 0 that says so.
            if n < readBuffer.count && !connection.sawHangup { connection.readable = false }
            return true
        }
        if n == 0 {
            connection.readEOF = true
            connection.readable = false
            return true
        }
        switch errno {
        case EAGAIN, EWOULDBLOCK:
            connection.readable = false
            return false
        case EINTR:
            return true
        default:
            close(connection)
            return false
        }
    }

    /// Writes pending output until done or the socket is full.
    func flush(_ connection: Connection) -> FlushResult {
        while connection.hasPendingOutput {
            let sent: Int
            if connection.outOffset < connection.out.count && connection.outBodyOffset < connection.outBody.count {
                sent = connection.out.withUnsafeBytes { head in
                    connection.outBody.withUnsafeBytes { body in
                        var vectors = (
                            iovec(
                                iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress! + connection.outOffset),
                                iov_len: head.count - connection.outOffset),
                            iovec(
                                iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress! + connection.outBodyOffset),
                                iov_len: body.count - connection.outBodyOffset)
                        )
                        return withUnsafeMutableBytes(of: &vectors) { raw in
                            var message = msghdr()
                            message.msg_iov = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
                            message.msg_iovlen = 2
                            return sendmsg(connection.fd, &message, Int32(MSG_NOSIGNAL))
                        }
                    }
                }
            } else if connection.outOffset < connection.out.count {
                sent = connection.out.withUnsafeBytes {
                    send(connection.fd, $0.baseAddress! + connection.outOffset, $0.count - connection.outOffset, Int32(MSG_NOSIGNAL))
                }
            } else {
                sent = connection.outBody.withUnsafeBytes {
                    send(connection.fd, $0.baseAddress! + connection.outBodyOffset, $0.count - connection.outBodyOffset, Int32(MSG_NOSIGNAL))
                }
            }
            if sent > 0 {
                let fromHead = min(sent, connection.out.count - connection.outOffset)
                connection.outOffset += fromHead
                connection.outBodyOffset += sent - fromHead
                connection.writeStalledSince = nil
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                if connection.writeStalledSince == nil { connection.writeStalledSince = now }
                return .blocked
            case EINTR:
                continue
            default:
                return .failed
            }
        }
        // Keep a small buffer for the next response; let big ones go.
        if connection.out.capacity > 64 * 1024 {
            connection.out = []
        } else {
            connection.out.removeAll(keepingCapacity: true)
        }
        connection.outOffset = 0
        connection.outBody = []
        connection.outBodyOffset = 0
        return .done
    }

    /// Turns the connection's EPOLLOUT interest on (a write is blocked) or off (all written).
    /// False when epoll refuses, which leaves the connection unable to make progress.
    func watchWrites(_ connection: Connection, _ on: Bool) -> Bool {
        guard connection.watchingWrites != on else { return true }
        var event = epoll_event()
        event.events = on ? Self.readEvents | EPOLLOUT.rawValue : Self.readEvents
        event.data.fd = connection.fd
        guard epoll_ctl(epollFD, EPOLL_CTL_MOD, connection.fd, &event) == 0 else {
            shared.logger.error("epoll_ctl(MOD) failed: errno \(errno)")
            return false
        }
        connection.watchingWrites = on
        return true
    }

    /// Shuts our side and waits briefly for the peer to close, so that the
    /// last response is not destroyed by an RST for unread input.
    func beginLinger(_ connection: Connection) {
        shutdown(connection.fd, Int32(SHUT_WR))
        connection.phase = .lingering
        // Shorter while stopping: shutdown should not wait on slow peers.
        connection.lingerDeadline = now + (stopping ? 0.25 : 2)
    }

    private func drainLinger(_ connection: Connection) {
        while connection.readable {
            let n = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
            if n > 0 {
                connection.lingerDrained += n
                if connection.lingerDrained > 1024 * 1024 { close(connection); return }
            } else if n == 0 {
                close(connection)
                return
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                connection.readable = false
            } else if errno != EINTR {
                close(connection)
                return
            }
        }
    }

    /// Closes at once, releasing anything waiting on the connection.
    func close(_ connection: Connection) {
        guard let slot = connections[Int(connection.fd)], slot === connection else { return }
        connections[Int(connection.fd)] = nil
        liveConnections -= 1
        shared.openConnections.subtract(1, ordering: .relaxed)
        if let ack = connection.pendingAck {
            connection.pendingAck = nil
            ack.release(cancel: true)
        }
        // Closing removes the fd from the epoll set too.
        Glibc.close(connection.fd)
        shared.descriptors.replenish()
    }
}
