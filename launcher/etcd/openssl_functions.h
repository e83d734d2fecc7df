/* The OpenSSL functions that TLS to etcd calls (Asio SSL's and tls_context/gateway_stream's
   own), one X(name) each. openssl_trampolines.S defines each as a jump through a table that
   openssl_loader.cpp fills from libssl.so.3 the first time a client asks for TLS: the
   launcher neither loads nor relocates OpenSSL at start. A function missing here
   is an undefined symbol at link time, never a silent static copy. Shared by C++ and asm. */
#pragma once

#define DDPLAUNCH_OPENSSL_FUNCTIONS(X)                                                                      \
  X(BIO_ctrl) X(BIO_ctrl_pending) X(BIO_free) X(BIO_new_bio_pair) X(BIO_read) X(BIO_write)                \
  X(ERR_clear_error) X(ERR_get_error) X(ERR_reason_error_string)                                         \
  X(SSL_CTX_check_private_key) X(SSL_CTX_ctrl) X(SSL_CTX_free) X(SSL_CTX_get_default_passwd_cb_userdata) \
  X(SSL_CTX_get_ex_data) X(SSL_CTX_get_verify_callback) X(SSL_CTX_load_verify_locations) X(SSL_CTX_new)  \
  X(SSL_CTX_set_default_passwd_cb_userdata) X(SSL_CTX_set_default_verify_paths) X(SSL_CTX_set_ex_data)   \
  X(SSL_CTX_set_options) X(SSL_CTX_set_verify) X(SSL_CTX_use_PrivateKey_file)                            \
  X(SSL_CTX_use_certificate_chain_file) X(SSL_accept) X(SSL_connect) X(SSL_ctrl) X(SSL_free)             \
  X(SSL_get0_param) X(SSL_get_error) X(SSL_get_ex_data) X(SSL_get_shutdown) X(SSL_get_verify_result)     \
  X(SSL_new) X(SSL_read) X(SSL_set1_host) X(SSL_set_bio) X(SSL_set_ex_data) X(SSL_write)                 \
  X(TLS_client_method) X(X509_VERIFY_PARAM_set1_ip_asc) X(X509_verify_cert_error_string)
