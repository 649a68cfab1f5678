package sql

import (
	"errors"

	"streamdb/catalog"
	"streamdb/pgcdc"
	"streamdb/sqlerr"
)

// A source connects over TLS with the CA and client certificate its SSL
// secrets hold (SSL CERTIFICATE AUTHORITY SECRET, SSL CERTIFICATE SECRET,
// SSL KEY SECRET), read like its password at each connect; package pgcdc
// applies them under the connection string's sslmode.

// sourceEndpoint puts together how to reach source src from its
// secrets as they are now: its connection string, and the PEM text of
// its SSL secrets.
func (e *Engine) sourceEndpoint(src *catalog.PGSource) (pgcdc.Endpoint, error) {
	dsn, err := e.sourceDSN(src)
	if err != nil {
		return pgcdc.Endpoint{}, err
	}
	ep := pgcdc.Endpoint{DSN: dsn}
	for _, s := range []struct {
		secret string
		pem    *[]byte
	}{{src.SSLCASecret, &ep.TLS.RootCerts}, {src.SSLCertSecret, &ep.TLS.ClientCert}, {src.SSLKeySecret, &ep.TLS.ClientKey}} {
		if s.secret == "" {
			continue
		}
		v, err := e.secretValue(s.secret)
		if err != nil {
			return pgcdc.Endpoint{}, err
		}
		*s.pem = []byte(v)
	}
	if err := ep.Check(); err != nil {
		return pgcdc.Endpoint{}, sourceTLSError(src, err)
	}
	return ep, nil
}

// sourceTLSError says which of src's SSL secrets err (from
// pgcdc.Endpoint.Check) is about, and what to change.
func sourceTLSError(src *catalog.PGSource, err error) error {
	if mode, ok := errors.AsType[*pgcdc.TLSModeError](err); ok {
		why := "would not use them"
		if mode.Mode != "disable" {
			why = "may connect without TLS"
		}
		if mode.Mode == "prefer" {
			mode.Mode = "prefer (the default)"
		}
		return sqlerr.New(sqlerr.InvalidParameterValue, "the source's SSL secrets need TLS, but its connection string's sslmode is %s, which %s", mode.Mode, why).
			WithHint("Set sslmode=verify-full in the connection string (or verify-ca to check the certificate's chain but not its host name).")
	}
	bad, ok := errors.AsType[*pgcdc.TLSError](err)
	if !ok {
		return sqlerr.New(sqlerr.InvalidParameterValue, "%v", err)
	}
	switch bad.Part {
	case pgcdc.PartRootCerts:
		return sqlerr.New(sqlerr.InvalidParameterValue, "secret %s (SSL CERTIFICATE AUTHORITY) is not usable: %s", src.SSLCASecret, bad.Reason).
			WithHint("Set it to the CA's certificate in PEM, -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----, with ALTER SECRET %s AS '...'.", src.SSLCASecret)
	case pgcdc.PartClientCert:
		return sqlerr.New(sqlerr.InvalidParameterValue, "secret %s (SSL CERTIFICATE) is not usable: %s", src.SSLCertSecret, bad.Reason).
			WithHint("Set it to the client certificate in PEM, -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----, with ALTER SECRET %s AS '...'.", src.SSLCertSecret)
	default:
		return sqlerr.New(sqlerr.InvalidParameterValue, "secret %s (SSL KEY) is not usable: %s", src.SSLKeySecret, bad.Reason).
			WithHint("Set it to the unencrypted private key of the certificate in secret %s, in PEM (-----BEGIN PRIVATE KEY----- to -----END PRIVATE KEY-----), with ALTER SECRET %s AS '...'.", src.SSLCertSecret, src.SSLKeySecret)
	}
}
