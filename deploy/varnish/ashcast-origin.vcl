# Where ashcast serves, and who may purge: the only file to edit (included by ashcast.vcl).
# Several origins: one backend block each, and one add_backend line each.
backend origin1 {
    .host = "127.0.0.1";
    .port = "8080";
    .probe = ashcast_health;
}

sub ashcast_add_origins {
    origins.add_backend(origin1);
}

# The publishers that send purges (ashcast start/watch/build with --purge): addresses or ranges.
acl ashcast_purgers {
    "127.0.0.1";
    "::1";
}
