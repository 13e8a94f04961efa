# Varnish in front of ashcast (Varnish 7.1+, vmod xkey from varnish-modules).
#
# The addresses are in ashcast-origin.vcl beside this file (origins and who may purge); this file needs no
# edit. Run: varnishd -a local=:6081 -a tls=127.0.0.1:6086,PROXY -f /etc/varnish/ashcast.vcl -p default_grace=60 ...
# (the whole command and the log mask's value: README.md, "Deploying behind a CDN"). Everything here follows
# the origin's headers: Cache-Control (s-maxage for us), Vary, ETag and the cache tags in `xkey`; nothing in
# this file knows a lifetime.
vcl 4.1;

import directors;
import std;
import xkey;

# An origin is out of rotation after 3 failed checks of 5, 1 s apart; grace then serves stale copies.
# With ashcast --prefix, put the prefix in front of the path.
probe ashcast_health {
    .request =
        "GET /volcanicashforecast/0.1/healthz HTTP/1.1"
        "Host: ashcast"
        "User-Agent: varnish-health-probe"
        "X-Forwarded-Proto: https"
        "Connection: close";
    .interval = 1s;
    .timeout = 1s;
    .window = 5;
    .threshold = 3;
}

sub vcl_init {
    new origins = directors.round_robin();
    call ashcast_add_origins;
}

include "ashcast-origin.vcl";

sub vcl_recv {
    set req.backend_hint = origins.backend();
    # X-Forwarded-For: Varnish has appended the client's address (client.ip) to it already; ashcast, with
    # this Varnish in --trusted-proxies, takes the entry 1 hop from the right, so a client's own forged
    # entries on the left change nothing and throttling stays per client. Behind the TLS terminator,
    # client.ip is the client's own address only because the terminator sends it by the PROXY protocol.

    if (req.method == "PURGE") {
        # Only the publishers (ashcast --purge) may purge: by address, never by a header a client can send,
        # and never through the TLS terminator's listener ("tls", PROXY protocol), whose connections all come
        # from the terminator's own address.
        if (local.socket == "tls" || client.ip !~ ashcast_purgers) {
            return (synth(403, "purging is not allowed from this address"));
        }
        if (!req.http.xkey) {
            return (synth(400, "name the cache tags to purge in the xkey header"));
        }
        # Soft: the copies expire at once but stay for grace, so an origin that is down still has an answer.
        set req.http.n-gone = xkey.softpurge(req.http.xkey);
        return (synth(200, "purged " + req.http.n-gone + " objects"));
    }

    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # Answers that depend on who asks are never looked up or stored: a token-bearing request always
    # reaches the origin and never gets another client's copy.
    if (req.http.Authorization) {
        return (pass);
    }
    # Operator and sign-in addresses (the origin answers them no-store too), and /config, which an
    # operator may change at any time without a publish to purge it.
    if (req.url ~ "^[^?]*/(datasets|withdraw|upload|jobs|token|login|healthz|config)(/|\?|$)") {
        return (pass);
    }
    # ashcast reads no cookie; dropping them keeps browsers' requests cacheable.
    unset req.http.Cookie;

    # One variant per encoding ashcast stores (br, gzip, none), whatever the exact header said: a coding
    # is taken when it is named without a q or with a q above 0 (`br;q=0` refuses br), in any case.
    if (req.http.Accept-Encoding ~ "(?i)(^|,)\s*br\s*(,|$|;\s*q\s*=\s*(1|0?\.\d*[1-9]))") {
        set req.http.X-Ashcast-Encoding = "br";
    } elsif (req.http.Accept-Encoding ~ "(?i)(^|,)\s*gzip\s*(,|$|;\s*q\s*=\s*(1|0?\.\d*[1-9]))") {
        set req.http.X-Ashcast-Encoding = "gzip";
    } else {
        set req.http.X-Ashcast-Encoding = "identity";
    }
    set req.http.Accept-Encoding = req.http.X-Ashcast-Encoding;
    # `/` varies on Accept; an Accept naming neither images nor application types always gets JSON.
    if (req.http.Accept !~ "(?i)(image|application)/") {
        set req.http.Accept = "application/json";
    }

    # A healthy origin is asked as soon as a copy expires (a purge expires it): never an old copy while
    # a new one could be had. With the origin down, the copy is served for the whole grace.
    if (std.healthy(req.backend_hint)) {
        set req.grace = 0s;
    }
    return (hash);
}

sub vcl_hash {
    # Stored apart per encoding (Varnish's own gzip handling would fold br into gzip) and per scheme
    # (an http answer is a redirect; X-Forwarded-Proto is set by the TLS terminator in front).
    hash_data(req.http.X-Ashcast-Encoding);
    hash_data(req.http.X-Forwarded-Proto);
}

sub vcl_hit {
    if (obj.ttl <= 0s) {
        set req.http.X-Ashcast-Stale = "1";
    }
}

sub vcl_backend_fetch {
    # Varnish asks origins for gzip; ashcast stores br too, so ask for the variant the client can take.
    if (bereq.http.X-Ashcast-Encoding && bereq.http.X-Ashcast-Encoding != "identity") {
        set bereq.http.Accept-Encoding = bereq.http.X-Ashcast-Encoding;
    } else {
        unset bereq.http.Accept-Encoding;
    }
}

sub vcl_backend_response {
    # Refusals and problems depend on the client: never stored, whatever their headers say.
    if (beresp.status == 401 || beresp.status == 403 || beresp.status == 429 || beresp.http.Content-Type ~ "^application/problem\+json") {
        set beresp.ttl = 0s;
        set beresp.uncacheable = true;
        return (deliver);
    }
    # Otherwise Varnish's built-in rules: no-store, private and no-cache are never stored.
}

sub vcl_backend_error {
    # No origin answered and no copy is left (or grace ran out): say so as ashcast says errors.
    set beresp.http.Content-Type = "application/problem+json";
    set beresp.http.Cache-Control = "no-store";
    set beresp.http.Retry-After = "10";
    set beresp.ttl = 0s;
    set beresp.uncacheable = true;
    synthetic({"{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"the origin servers are unreachable and no recent copy of this answer is cached; try again in a few seconds" }"});
    return (deliver);
}

sub vcl_synth {
    if (resp.status >= 400) {
        set resp.http.Content-Type = "application/problem+json";
        set resp.http.Cache-Control = "no-store";
        synthetic({"{"type":"about:blank","title":""} + resp.reason + {"","status":"} + resp.status + {"}"});
        return (deliver);
    }
}

sub vcl_deliver {
    if (req.http.X-Ashcast-Stale) {
        # A stale copy: the origin is down and the answer is past its lifetime (within grace).
        set resp.http.X-Cache = "STALE";
        set resp.http.Warning = {"110 - "Response is Stale""};
    } elsif (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
    # The tags are for this cache only; a CDN in front reads Surrogate-Key, which stays.
    unset resp.http.xkey;
}
