// SPDX-License-Identifier: MIT
/* bcrypt PASSWORD: prints a bcrypt hash of PASSWORD (cost 4: tests only),
 * for the basic_auth_users of serve --web-config. Not part of sparkops. */
#include <crypt.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	const char *salt = crypt_gensalt("$2b$", 4, NULL, 0);
	const char *h = salt ? crypt(argv[1], salt) : NULL;
	if (!h || h[0] == '*')
		return 1;
	puts(h);
	return 0;
}
